// TCP routes through the real Envoy, server side only (issue 27): a CONNECT to a TCP route's
// host:port with a session handle as `Authorization: Portcullis` opens a tunnel to a TCP echo
// upstream (HTTP/1.1 and HTTP/2); without a session it is a 401, for a denied user a 403 whose
// JSON names the route and why, and neither reaches the upstream; the bastion form reaches its
// target; an unreachable target is Envoy's 503; a CONNECT to an HTTP route, or to another port, is
// refused; programmatic login answers on a TCP route's host and on a bastion host. Sessions are
// written into the store (no IdP).
import assert from 'node:assert/strict';
import { connect as http2Connect } from 'node:http2';
import { request } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { PROGRAMMATIC_LOGIN_PATH, REDIRECT_URI_PARAM } from '../../src/contract/endpoints.js';
import { adaSession, proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { freePort } from '../support/ports.js';

/** A TCP echo server that counts the connections it accepted. */
interface Echo {
  readonly port: number;
  readonly accepted: number;
  stop(): Promise<void>;
}

async function startEcho(): Promise<Echo> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    stop: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What a CONNECT came to: the status, and either the tunnel or the answer's body. */
interface Connected {
  readonly status: number;
  readonly tunnel: Duplex;
  readonly body: string;
}

/** A CONNECT over HTTP/1.1 to Envoy's listener; the body of a refusal is read to its end. */
function connectTo(port: number, authority: string, headers: Record<string, string>): Promise<Connected> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, ...headers },
      agent: false,
      timeout: 10_000,
    });
    req.once('connect', (res, tunnel: Duplex, head: Buffer) => {
      const status = res.statusCode ?? 0;
      if (status === 200) {
        if (head.length > 0) tunnel.unshift(head);
        resolve({ status, tunnel, body: '' });
        return;
      }
      const chunks = [head];
      const length = Number(res.headers['content-length'] ?? 0);
      const done = (): void => {
        tunnel.destroy();
        resolve({ status, tunnel, body: Buffer.concat(chunks).toString('utf8') });
      };
      if (head.length >= length) return done();
      tunnel.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).length >= length) done();
      });
      tunnel.once('end', done);
    });
    req.once('timeout', () => req.destroy(new Error(`CONNECT ${authority} timed out`)));
    req.once('error', reject);
    req.end();
  });
}

/** Writes `payload` into the tunnel and resolves with what comes back once as many bytes came. */
function roundTrip(tunnel: Duplex, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    tunnel.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= payload.length) resolve(Buffer.concat(chunks));
    });
    tunnel.once('error', reject);
    tunnel.once('close', () => reject(new Error(`tunnel closed after ${size} bytes`)));
    tunnel.write(payload);
  });
}

let echo: Echo;
let portcullis: TestPortcullis;
let token: string;
let deadPort: number;
const adaOnly = { allowed_users: ['ada@example.com'] };

before(async () => {
  echo = await startEcho();
  deadPort = await freePort();
  const to = `tcp://127.0.0.1:${echo.port}`;
  portcullis = await startPortcullis({
    routes: [
      { from: 'tcp+https://db.test:5432', to, ...adaOnly },
      { from: 'tcp+https://bob-db.test:5432', to, allowed_users: ['bob@example.com'] },
      { from: 'tcp+https://bastion.test/inner.test:7000', to, ...adaOnly },
      { from: 'tcp+https://dead.test:5432', to: `tcp://127.0.0.1:${deadPort}`, ...adaOnly },
      { from: 'https://web.test', to: `http://127.0.0.1:${echo.port}`, ...adaOnly },
    ],
  });
  const ada = adaSession();
  await portcullis.running.sessions.put(ada);
  token = portcullis.running.authorize.handles().issue(ada.id);
});

after(async () => {
  await portcullis?.stop();
  await echo?.stop();
});

const asClient = (): Record<string, string> => ({
  authorization: `Portcullis ${token}`,
  accept: 'application/json',
});

describe('CONNECT to TCP routes through Envoy', () => {
  test('a signed-in CONNECT opens a tunnel whose bytes round-trip', async () => {
    const connected = await connectTo(portcullis.proxyPort, 'db.test:5432', asClient());
    assert.equal(connected.status, 200, connected.body);
    const payload = Buffer.from('hello through the tunnel\n'.repeat(1000));
    assert.deepEqual(await roundTrip(connected.tunnel, payload), payload);
    connected.tunnel.destroy();
  });

  test('without a session: 401 JSON, and nothing reaches the upstream', async () => {
    const before = echo.accepted;
    const connected = await connectTo(portcullis.proxyPort, 'db.test:5432', {});
    assert.equal(connected.status, 401, 'a CONNECT is never sent to a sign-in page');
    assert.equal(JSON.parse(connected.body).error, 'Unauthorized');
    assert.equal(echo.accepted, before);
  });

  test('a denied user: 403 JSON naming the route and the reason, nothing reaches the upstream', async () => {
    const before = echo.accepted;
    const connected = await connectTo(portcullis.proxyPort, 'bob-db.test:5432', asClient());
    assert.equal(connected.status, 403);
    const body = JSON.parse(connected.body) as { reason: string; request_id: string };
    assert.match(body.reason, /bob-db\.test:5432/);
    assert.match(body.reason, /\(.+\)/, 'the policy reasons');
    assert.ok(body.request_id.length > 0);
    assert.equal(echo.accepted, before);
  });

  test('the bastion form reaches its target', async () => {
    const connected = await connectTo(portcullis.proxyPort, 'inner.test:7000', asClient());
    assert.equal(connected.status, 200, connected.body);
    const payload = Buffer.from('bastion');
    assert.deepEqual(await roundTrip(connected.tunnel, payload), payload);
    connected.tunnel.destroy();
  });

  test("an unreachable target is Envoy's 503", async () => {
    const connected = await connectTo(portcullis.proxyPort, 'dead.test:5432', asClient());
    assert.equal(connected.status, 503);
  });

  test('a CONNECT to an HTTP route, another port or an unknown host is refused', async () => {
    const before = echo.accepted;
    for (const authority of ['web.test:443', 'web.test:80', 'db.test:5433', 'nowhere.test:5432']) {
      const connected = await connectTo(portcullis.proxyPort, authority, asClient());
      assert.ok([403, 404].includes(connected.status), `${authority}: ${connected.status}`);
    }
    assert.equal(echo.accepted, before);
  });

  test('CONNECT over HTTP/2 opens a tunnel too', async () => {
    const session = http2Connect(`http://127.0.0.1:${portcullis.proxyPort}`);
    try {
      const stream = session.request(
        { ':method': 'CONNECT', ':authority': 'db.test:5432', ...asClient() },
        { endStream: false },
      );
      const status = await new Promise<number>((resolve, reject) => {
        stream.once('response', (headers) => resolve(Number(headers[':status'])));
        stream.once('error', reject);
      });
      assert.equal(status, 200);
      const payload = Buffer.from('over h2');
      assert.deepEqual(await roundTrip(stream, payload), payload);
      stream.close();
    } finally {
      session.destroy();
    }
  });

  test('programmatic login answers on a TCP route host and on a bastion host', async () => {
    const query = `?${new URLSearchParams({ [REDIRECT_URI_PARAM]: 'http://127.0.0.1:9/cb' })}`;
    for (const host of ['db.test', 'bastion.test']) {
      const response = await proxyRequest(portcullis.proxyPort, host, `${PROGRAMMATIC_LOGIN_PATH}${query}`);
      assert.equal(response.status, 200, `${host}: ${response.body}`);
      assert.match(response.body, /^https:\/\/authenticate\.example\.com\/\.portcullis\/sign_in\?/);
    }
    const other = await proxyRequest(portcullis.proxyPort, 'db.test', '/anything');
    assert.equal(other.status, 404, 'a TCP route host serves only its own endpoints over HTTP');
  });
});
