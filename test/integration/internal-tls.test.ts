// tls_derive end to end: a grpc-js server with the derived credentials (the production gate, the
// health service, the ADS server and a databroker-shaped method) is reached over TLS by a client
// from a SEPARATE derivation of the same secret, dialling an IP while checking the tls_derive name;
// a client deriving from another secret, or checking another name, fails the handshake. A real
// Envoy (BoringSSL) with the bootstrap's ADS over derived TLS opens its ADS stream, and one
// trusting another secret's CA fails verification and never does. The server listens through the
// production listener (grpc-listener.ts), and a connection that never handshakes is closed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { service as HEALTH_SERVICE } from 'grpc-health-check';
import { deriveInternalTls, type DerivedTls } from '../../src/pki/derived-tls.js';
import {
  internalCallCredentials,
  internalChannelCredentials,
  internalServerCredentials,
} from '../../src/grpc/internal-grpc.js';
import { grpcServerOptions } from '../../src/grpc/grpc-limits.js';
import { listenGrpc, type GrpcListener } from '../../src/grpc/grpc-listener.js';
import { registerHealth } from '../../src/grpc/grpc-health.js';
import { deriveGrpcCredential } from '../../src/contract/grpc-credential.js';
import { AdsServer } from '../../src/xds/server/ads-server.js';
import { SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { XDS_CLUSTER } from '../../src/contract/names.js';
import { silentLogger } from '../../src/shared/logger.js';
import { startEnvoy } from '../support/envoy.js';
import { waitFor } from '../support/wait.js';

const SECRET = new Uint8Array(32).fill(21);
const OTHER_SECRET = new Uint8Array(32).fill(22);
const NAME = 'portcullis.internal';
const CREDENTIAL = deriveGrpcCredential(SECRET);

const same = (value: Buffer): Buffer => value;
const DATABROKER: grpc.ServiceDefinition = {
  Get: {
    path: '/portcullis.databroker.v1.Databroker/Get',
    requestStream: false,
    responseStream: false,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  },
};
const Databroker = grpc.makeGenericClientConstructor(DATABROKER, 'Databroker');
const Health = grpc.makeClientConstructor(HEALTH_SERVICE as unknown as grpc.ServiceDefinition, 'Health');

let server: grpc.Server;
let ads: AdsServer;
let port: number;
let listener: GrpcListener;

before(async () => {
  const tls = await deriveInternalTls(SECRET, NAME);
  server = new grpc.Server(
    grpcServerOptions({ envoyCredential: CREDENTIAL, internalSecret: () => SECRET, logger: silentLogger }),
  );
  registerHealth(server).set('', true);
  ads = new AdsServer({ source: new SnapshotStore(), logger: silentLogger, credential: CREDENTIAL });
  ads.register(server);
  server.addService(DATABROKER, {
    Get: ((_call, callback) => callback(null, Buffer.from('record'))) as grpc.handleUnaryCall<Buffer, Buffer>,
  });
  // Through the production listener (connections bounded, handed to grpc-js's TLS).
  listener = await listenGrpc(server, {
    host: '127.0.0.1',
    port: 0,
    credentials: internalServerCredentials(tls),
    logger: silentLogger,
  });
  port = listener.port;
});

after(() => {
  listener.close();
  ads.close();
  server.forceShutdown();
});

test('a connection that never starts its TLS handshake is closed within 10 s', async () => {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.resume();
  await new Promise((resolve) => socket.once('connect', resolve));
  const started = performance.now();
  await waitFor(async () => socket.destroyed || socket.readableEnded, {
    what: 'the server to close a connection without a handshake',
    timeoutMs: 13_000,
    intervalMs: 100,
  });
  socket.destroy();
  assert.ok(performance.now() - started > 5000, 'not closed before the handshake timeout');
});

/** The health Check status through a client with `tls`'s channel credentials, or the error code's name. */
async function healthOver(tls: DerivedTls | undefined): Promise<string> {
  const { credentials, options } = internalChannelCredentials(tls);
  const client = new Health(`127.0.0.1:${port}`, credentials, options);
  try {
    return await new Promise<string>((resolve) => {
      const check = client['check'] as (
        request: { service: string },
        options: grpc.CallOptions,
        callback: (err: grpc.ServiceError | null, response?: { status: string }) => void,
      ) => void;
      check.call(client, { service: '' }, { deadline: Date.now() + 5000 }, (err, response) =>
        resolve(err === null ? String(response?.status) : grpc.status[err.code]),
      );
    });
  } finally {
    client.close();
  }
}

test('a client from a separate derivation of the same secret connects, verifies the name and calls', async () => {
  const clientTls = await deriveInternalTls(SECRET, NAME);
  assert.equal(await healthOver(clientTls), 'SERVING');
  // A databroker call: TLS channel credentials composed with the internal token.
  const { credentials, options } = internalChannelCredentials(clientTls);
  const client = new Databroker(
    `127.0.0.1:${port}`,
    credentials.compose(internalCallCredentials(() => SECRET, 'databroker')),
    options,
  );
  try {
    const reply = await new Promise<string>((resolve, reject) =>
      (client['Get'] as (r: Buffer, cb: (err: grpc.ServiceError | null, v?: Buffer) => void) => void).call(
        client,
        Buffer.from('id'),
        (err, value) => (err === null ? resolve(String(value)) : reject(err)),
      ),
    );
    assert.equal(reply, 'record');
  } finally {
    client.close();
  }
});

test('a client deriving from another secret, checking another name, or in plaintext, fails', async () => {
  assert.equal(await healthOver(await deriveInternalTls(OTHER_SECRET, NAME)), 'UNAVAILABLE');
  assert.equal(await healthOver(await deriveInternalTls(SECRET, 'other.internal')), 'UNAVAILABLE');
  assert.equal(await healthOver(undefined), 'UNAVAILABLE');
});

/** A counter from Envoy's admin /stats (0 when absent). */
async function envoyCounter(admin: (path: string) => Promise<string>, name: string): Promise<number> {
  const text = await admin(`/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`);
  const match = new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

/** A real Envoy whose bootstrap dials the ADS server over TLS trusting `tls`'s CA and name. */
async function envoyTrusting(
  tls: { caPem: string; serverName: string },
  t: { after(fn: () => unknown): void },
): Promise<Awaited<ReturnType<typeof startEnvoy>>> {
  const envoy = await startEnvoy({
    bootstrap: buildBootstrap({
      ads: {
        address: '127.0.0.1',
        port,
        credential: CREDENTIAL,
        tls: { caPem: tls.caPem, serverName: tls.serverName },
      },
      admin: { port: 0 },
    }),
  });
  t.after(() => envoy.stop());
  return envoy;
}

test('a real Envoy with ADS over derived TLS (its CA from a separate derivation) opens its ADS stream', async (t) => {
  const clientTls = await deriveInternalTls(SECRET, NAME);
  const requestsBefore = ads.stats().requests;
  const envoy = await envoyTrusting(clientTls, t);
  await waitFor(async () => ads.stats().requests > requestsBefore, {
    what: 'an ADS request from Envoy over derived TLS',
    timeoutMs: 20_000,
  });
  assert.ok((await envoyCounter(envoy.admin, `cluster.${XDS_CLUSTER}.ssl.handshake`)) >= 1);
  assert.equal(await envoyCounter(envoy.admin, `cluster.${XDS_CLUSTER}.ssl.fail_verify_error`), 0);
  assert.equal(ads.stats().unauthenticatedStreams, 0);
});

test("a real Envoy trusting another secret's CA fails verification and opens no ADS stream", async (t) => {
  const otherTls = await deriveInternalTls(OTHER_SECRET, NAME);
  const streamsBefore = ads.stats().streamsTotal;
  const envoy = await envoyTrusting(otherTls, t);
  await waitFor(
    async () => (await envoyCounter(envoy.admin, `cluster.${XDS_CLUSTER}.ssl.fail_verify_error`)) >= 1,
    {
      what: 'Envoy to refuse the server certificate',
      timeoutMs: 20_000,
    },
  );
  assert.equal(await envoyCounter(envoy.admin, `cluster.${XDS_CLUSTER}.ssl.handshake`), 0);
  assert.equal(ads.stats().streamsTotal, streamsBefore);
});
