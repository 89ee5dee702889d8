// The databroker as split mode runs it: the Databroker service behind `tls_derive` TLS and the
// internal-token check (grpc/internal-grpc.ts, pki/derived-tls.ts), called by a client from
// another derivation of the same shared_secret. A client of another secret is refused: its TLS
// handshake with derived TLS, its token without TLS. Also measures a Get round trip over loopback.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createDatabrokerClient } from '../../src/databroker/grpc/client.js';
import { registerDatabrokerService } from '../../src/databroker/grpc/service.js';
import { MemoryBackend } from '../../src/databroker/memory-backend.js';
import { deriveInternalTls, type DerivedTls } from '../../src/pki/derived-tls.js';
import {
  internalCallAuthorizer,
  internalCallCredentials,
  internalChannelCredentials,
  internalServerCredentials,
} from '../../src/grpc/internal-grpc.js';
import { silentLogger } from '../../src/shared/logger.js';
import { StoreUnavailableError, type RecordBackend, type RecordChange } from '../../src/session/records.js';
import { waitFor } from '../support/wait.js';

const SECRET = Buffer.alloc(32, 7);
const OTHER_SECRET = Buffer.alloc(32, 8);
const SERVER_NAME = 'portcullis.internal';

async function startDatabroker(tls: DerivedTls | undefined): Promise<{ address: string; stop: () => void }> {
  const server = new grpc.Server();
  registerDatabrokerService(server, new MemoryBackend(), {
    authorize: internalCallAuthorizer(() => SECRET, 'databroker'),
    logger: silentLogger,
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', internalServerCredentials(tls), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  return { address: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

function client(address: string, secret: Uint8Array, tls: DerivedTls | undefined): RecordBackend {
  const { credentials, options } = internalChannelCredentials(tls);
  return createDatabrokerClient({
    address,
    credentials,
    callCredentials: internalCallCredentials(() => secret, 'databroker'),
    channelOptions: options,
    timeoutMs: 2_000,
    logger: silentLogger,
  });
}

test('over derived TLS with internal tokens: calls and the change feed work; another secret is refused', async (t) => {
  const databroker = await startDatabroker(await deriveInternalTls(SECRET, SERVER_NAME));
  const writer = client(databroker.address, SECRET, await deriveInternalTls(SECRET, SERVER_NAME));
  const reader = client(databroker.address, SECRET, await deriveInternalTls(SECRET, SERVER_NAME));
  const stranger = client(
    databroker.address,
    OTHER_SECRET,
    await deriveInternalTls(OTHER_SECRET, SERVER_NAME),
  );
  t.after(async () => {
    await Promise.all([writer.close(), reader.close(), stranger.close()]);
    databroker.stop();
  });
  const changes: RecordChange[] = [];
  reader.watch((change) => changes.push(change));
  await waitFor(async () => changes.some((c) => c.kind === 'resumed'), {
    what: 'the Watch stream to go live',
  });
  const put = await writer.put('session', 'tls', 'sealed', { ttlMs: 60_000 });
  assert.deepEqual(await reader.get('session', 'tls'), put);
  await waitFor(async () => changes.some((c) => c.kind === 'put' && c.id === 'tls'), {
    what: 'the put on the feed',
  });
  await assert.rejects(
    stranger.ping(),
    StoreUnavailableError,
    'a client of another secret fails its handshake',
  );
});

test('without TLS a token from another secret is refused, and the measured Get round trip', async (t) => {
  const databroker = await startDatabroker(undefined);
  const member = client(databroker.address, SECRET, undefined);
  const stranger = client(databroker.address, OTHER_SECRET, undefined);
  t.after(async () => {
    await Promise.all([member.close(), stranger.close()]);
    databroker.stop();
  });
  await member.put('session', 'k', 'x'.repeat(600));
  await assert.rejects(
    stranger.get('session', 'k'),
    (err: unknown) => err instanceof StoreUnavailableError && /refused our internal token/.test(err.message),
  );
  const times: number[] = [];
  for (let i = 0; i < 2_000; i += 1) {
    const started = performance.now();
    await member.get('session', 'k');
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number): string => (times[Math.floor(times.length * q)] ?? 0).toFixed(3);
  t.diagnostic(`Get round trip with internal tokens, loopback: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`);
});
