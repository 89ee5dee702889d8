// The tunnel filter chain through the real Envoy: a TLS connection whose ALPN offer carries the
// tunnel marker gets the tunnel chain's HTTP/2 windows (1 MiB per stream, 4 MiB per connection,
// read from Envoy's own SETTINGS and WINDOW_UPDATE), takes CONNECT only (an HTTP route answers 403
// there and is never reached), and carries a tunnel intact; every other connection gets the
// default chain's 64 KiB / 1 MiB and reaches HTTP routes as before. The real `portcullis tcp`
// lands on the tunnel chain (Envoy's RBAC counter of that chain counts its CONNECT). Adding the
// first TCP route to a running config adds the chain without closing open HTTP/2 connections.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { TUNNEL_ALPN_MARKER } from '../../src/contract/names.js';
import { fileTokenCache, tokenCachePath } from '../../src/cli/token-cache.js';
import { adminRequest } from '../../src/envoy/admin.js';
import {
  TUNNEL_CONNECTION_WINDOW_BYTES,
  TUNNEL_STREAM_WINDOW_BYTES,
} from '../../src/xds/compile/tunnel-chain.js';
import { adaSession } from '../support/portcullis.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import {
  echoRoundTrip,
  echoTransfer,
  startClient,
  startCountingEcho,
  transferOver,
  type CountingEcho,
} from '../support/tcp-parts.js';
import { startTlsPortcullis, type TlsPortcullis } from '../support/tcp-portcullis.js';
import { waitFor } from '../support/wait.js';

const DB = 'db.localhost:5432';
const MIB = 1024 * 1024;
/** The default chain's windows (envoy-contract.test.ts asserts them on the compiled listener). */
const DEFAULT_STREAM_WINDOW = 65_536;
const DEFAULT_CONNECTION_WINDOW = 1_048_576;

describe('the tunnel filter chain through the real Envoy', () => {
  let echo: CountingEcho;
  let app: Server;
  let appRequests = 0;
  let portcullis: TlsPortcullis;
  let token: string;
  const sessions: ClientHttp2Session[] = [];

  before(async () => {
    echo = await startCountingEcho();
    app = await startApp(() => (appRequests += 1));
    portcullis = await startTlsPortcullis(['db.localhost', 'app.localhost'], () => ({
      ...SIGN_IN,
      routes: [
        { from: `tcp+https://${DB}`, to: `tcp://127.0.0.1:${echo.port}`, allow_any_authenticated_user: true },
        appRoute(app),
      ],
    }));
    const ada = adaSession();
    await portcullis.running.sessions.put(ada);
    token = portcullis.running.authorize.handles().issue(ada.id);
  });

  after(async () => {
    for (const session of sessions) session.destroy();
    await portcullis?.stop();
    await echo?.close();
    app?.close();
  });

  const h2 = (alpn: string[], servername = 'db.localhost'): Promise<ClientHttp2Session> =>
    h2Session(portcullis, sessions, alpn, servername);

  /** Envoy's count of requests the tunnel chain's CONNECT-only RBAC let through (or refused). */
  async function rbacCount(which: 'allowed' | 'denied'): Promise<number> {
    const filter = encodeURIComponent(`^http\\.ingress\\.rbac\\.${which}$`);
    const { body } = await adminRequest(portcullis.adminUrl, `/stats?format=json&filter=${filter}`, {
      timeoutMs: 2_000,
    });
    const stats = (JSON.parse(body) as { stats: { value?: number }[] }).stats;
    return stats.reduce((sum, stat) => sum + (stat.value ?? 0), 0);
  }

  test('only a connection offering the marker gets the tunnel windows', async () => {
    const tunnel = await h2(['h2', 'http/1.1', TUNNEL_ALPN_MARKER]);
    assert.equal(tunnel.remoteSettings.initialWindowSize, TUNNEL_STREAM_WINDOW_BYTES);
    await waitFor(async () => tunnel.state.remoteWindowSize === TUNNEL_CONNECTION_WINDOW_BYTES, {
      what: "Envoy's WINDOW_UPDATE to the tunnel chain's connection window",
      timeoutMs: 5_000,
    });
    const plain = await h2(['h2', 'http/1.1']);
    assert.equal(plain.remoteSettings.initialWindowSize, DEFAULT_STREAM_WINDOW);
    await waitFor(async () => plain.state.remoteWindowSize === DEFAULT_CONNECTION_WINDOW, {
      what: "Envoy's WINDOW_UPDATE to the default connection window",
      timeoutMs: 5_000,
    });
  });

  test('the tunnel chain takes CONNECT only: an HTTP route answers 403 there, 200 on the default chain', async () => {
    const deniedBefore = await rbacCount('denied');
    const tunnel = await h2(['h2', 'http/1.1', TUNNEL_ALPN_MARKER], 'app.localhost');
    const refused = await getRoot(tunnel, 'app.localhost');
    assert.equal(refused.status, 403, refused.body);
    assert.equal(appRequests, 0, 'the HTTP route was reached through the tunnel chain');
    assert.equal(await rbacCount('denied'), deniedBefore + 1);
    const plain = await h2(['h2', 'http/1.1'], 'app.localhost');
    assert.deepEqual(await getRoot(plain, 'app.localhost'), { status: 200, body: 'app' });
    assert.equal(appRequests, 1);
  });

  test('a CONNECT on the tunnel chain carries 16 MiB both ways intact', async () => {
    const session = await h2(['h2', 'http/1.1', TUNNEL_ALPN_MARKER]);
    const stream = session.request(
      { ':method': 'CONNECT', ':authority': DB, authorization: `Portcullis ${token}` },
      { endStream: false },
    );
    const [headers] = (await once(stream, 'response')) as [Record<string, string>];
    assert.equal(Number(headers[':status']), 200);
    const result = await transferOver(stream, 16 * MIB, 60_000);
    assert.equal(result.receivedBytes, 16 * MIB);
    assert.equal(result.receivedSha256, result.sentSha256, 'the bytes came back changed');
  });

  test('portcullis tcp lands on the tunnel chain', async () => {
    const home = join(portcullis.dir, 'home');
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
    await fileTokenCache(tokenCachePath(env)).put('db.localhost', token);
    const client = startClient(
      [
        'tcp',
        DB,
        '--via',
        `https://127.0.0.1:${portcullis.port}`,
        '--ca-cert',
        portcullis.certificate.certFile,
        '--no-browser',
      ],
      env,
    );
    try {
      const port = await client.listeningPort();
      const allowedBefore = await rbacCount('allowed');
      assert.equal(await echoRoundTrip(port, 'through the tunnel chain\n'), 'through the tunnel chain\n');
      assert.equal(
        await rbacCount('allowed'),
        allowedBefore + 1,
        "the CONNECT passed the tunnel chain's RBAC",
      );
      const result = await echoTransfer(port, 16 * MIB, 60_000);
      assert.equal(result.receivedSha256, result.sentSha256, client.stderr());
    } finally {
      await client.stop();
    }
  });
});

describe('adding the first TCP route to a running TLS config', () => {
  let app: Server;
  let portcullis: TlsPortcullis;
  const sessions: ClientHttp2Session[] = [];

  before(async () => {
    app = await startApp(() => undefined);
    portcullis = await startTlsPortcullis(['db.localhost', 'app.localhost'], () => ({
      ...SIGN_IN,
      routes: [appRoute(app)],
    }));
  });

  after(async () => {
    for (const session of sessions) session.destroy();
    await portcullis?.stop();
    app?.close();
  });

  test('adds the tunnel chain, and an HTTP/2 connection opened before keeps serving', async () => {
    const marker = ['h2', 'http/1.1', TUNNEL_ALPN_MARKER];
    const earlier = await h2Session(portcullis, sessions, marker, 'app.localhost');
    assert.equal(earlier.remoteSettings.initialWindowSize, DEFAULT_STREAM_WINDOW, 'no tunnel chain yet');
    assert.deepEqual(await getRoot(earlier, 'app.localhost'), { status: 200, body: 'app' });
    const configPath = join(portcullis.dir, 'config.yaml');
    const config = parse(readFileSync(configPath, 'utf8')) as { routes: unknown[] };
    config.routes.push({
      from: `tcp+https://${DB}`,
      to: 'tcp://127.0.0.1:9',
      allow_any_authenticated_user: true,
    });
    writeFileSync(`${configPath}.tmp`, stringify(config));
    renameSync(`${configPath}.tmp`, configPath);
    await waitFor(
      async () => {
        const probe = await h2Session(portcullis, sessions, marker);
        probe.destroy();
        return probe.remoteSettings.initialWindowSize === TUNNEL_STREAM_WINDOW_BYTES;
      },
      { what: 'the tunnel chain in Envoy', timeoutMs: 15_000, intervalMs: 100 },
    );
    assert.ok(!earlier.closed && !earlier.destroyed, 'the earlier connection was closed');
    assert.deepEqual(await getRoot(earlier, 'app.localhost'), { status: 200, body: 'app' });
  });
});

/**
 * An HTTP/2 session to `portcullis`'s Envoy over TLS offering `alpn` (SNI `servername`), once
 * Envoy's SETTINGS came; kept in `sessions` for the suite to close.
 */
async function h2Session(
  portcullis: TlsPortcullis,
  sessions: ClientHttp2Session[],
  alpn: string[],
  servername = 'db.localhost',
): Promise<ClientHttp2Session> {
  const socket = tlsConnect({
    host: '127.0.0.1',
    port: portcullis.port,
    servername,
    ca: portcullis.certificate.certPem,
    ALPNProtocols: alpn,
  });
  await once(socket, 'secureConnect');
  assert.equal(socket.alpnProtocol, 'h2', 'Envoy selects h2, never the marker');
  const session = http2Connect(`https://${servername}`, { createConnection: () => socket });
  sessions.push(session);
  session.on('error', () => undefined);
  await once(session, 'remoteSettings');
  return session;
}

/** The status and body of a GET for `host`/ on `session`. */
async function getRoot(session: ClientHttp2Session, host: string): Promise<{ status: number; body: string }> {
  const stream = session.request({ ':method': 'GET', ':path': '/', ':authority': host });
  const [headers] = (await once(stream, 'response')) as [Record<string, string>];
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return { status: Number(headers[':status']), body: Buffer.concat(chunks).toString('utf8') };
}

/** An HTTP upstream on 127.0.0.1 answering `app` to every request (`onRequest` counts them). */
async function startApp(onRequest: () => unknown): Promise<Server> {
  const app = createServer((_req, res) => {
    onRequest();
    res.end('app');
  });
  app.listen(0, '127.0.0.1');
  await once(app, 'listening');
  return app;
}

/** The public HTTP route to `app` on app.localhost. */
function appRoute(app: Server): Record<string, unknown> {
  return {
    from: 'https://app.localhost',
    to: `http://127.0.0.1:${(app.address() as AddressInfo).port}`,
    allow_public_unauthenticated_access: true,
  };
}
