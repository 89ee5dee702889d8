// PROXY protocol through the real Envoy (`use_proxy_protocol`): a connection that starts with a
// PROXY header, v1 (text) or v2 (binary), is taken as coming from the address in it, so the upstream
// gets that address in X-Forwarded-For and the access log names it as the client; the HTTP->HTTPS
// redirect listener reads the header too; a connection without one is refused. The headers are
// built with proxy-protocol-js; HTTP and TLS are node's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import proxyProtocol from 'proxy-protocol-js';
import { churnDir, startChurnPortcullis, type ChurnPortcullis } from '../support/churn-portcullis.js';
import { freePort } from '../support/ports.js';
import { generateTestCertificate } from '../support/test-certs.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const HOST = 'pp.test';

let dir: ReturnType<typeof churnDir>;
let upstream: EchoUpstream;
let portcullis: ChurnPortcullis;
let redirectPort: number;

before(async () => {
  dir = churnDir();
  upstream = await startEchoUpstream({ id: 'pp' });
  redirectPort = await freePort();
  const certificate = generateTestCertificate(HOST);
  portcullis = await startChurnPortcullis(
    [{ from: `https://${HOST}`, to: upstream.url, allow_public_unauthenticated_access: true }],
    {
      adsApiType: 'DELTA_GRPC',
      dir: dir.path,
      settings: {
        insecure_server: false,
        certificate_file: certificate.certFile,
        certificate_key_file: certificate.keyFile,
        use_proxy_protocol: true,
        http_redirect_addr: `127.0.0.1:${redirectPort}`,
        log_level: 'info',
      },
    },
  );
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
  dir?.rm();
});

/** A PROXY v1 header naming `client` (IPv4) as the source. */
function v1Header(client: string): Uint8Array {
  const text = new proxyProtocol.V1ProxyProtocol(
    proxyProtocol.INETProtocol.TCP4,
    new proxyProtocol.Peer(client, 40000),
    new proxyProtocol.Peer('127.0.0.1', 443),
  ).build();
  return Buffer.from(text);
}

/** A PROXY v2 header (PROXY command, TCP over IPv4) naming `client` as the source. */
function v2Header(client: string): Uint8Array {
  const octets = client.split('.').map(Number) as [number, number, number, number];
  return new proxyProtocol.V2ProxyProtocol(
    proxyProtocol.Command.PROXY,
    proxyProtocol.TransportProtocol.STREAM,
    new proxyProtocol.IPv4ProxyAddress(
      proxyProtocol.IPv4Address.createFrom(octets),
      40000,
      proxyProtocol.IPv4Address.createFrom([127, 0, 0, 1]),
      443,
    ),
  ).build();
}

/** A TCP connection to `port` on which `header` was written first. */
function connectWithHeader(port: number, header: Uint8Array): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port }, () => {
      socket.off('error', reject);
      socket.write(header, () => resolve(socket));
    });
    socket.once('error', reject);
  });
}

/** One response to GET `path` with `requestId`, over `socket` (TLS to the HTTPS listener when `tls`). */
function get(
  socket: Socket,
  tls: boolean,
  requestId: string,
  path = '/',
): Promise<IncomingMessage & { body: string }> {
  return new Promise((resolve, reject) => {
    const options = {
      host: '127.0.0.1',
      path,
      headers: { host: HOST, 'x-request-id': requestId },
      // No agent: node then sends the request on the socket createConnection gives.
      createConnection: () =>
        tls ? tlsConnect({ socket, servername: HOST, rejectUnauthorized: false }) : socket,
    };
    const req = (tls ? httpsRequest : request)(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Object.assign(res, { body: Buffer.concat(chunks).toString('utf8') })));
    });
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The access-log client of the request for `path` (unique per test: Envoy replaces the request id
 * an external client sends), once its line is in.
 */
function loggedClient(path: string): Promise<unknown> {
  return waitFor(
    async () => {
      const record = portcullis.logs.find(
        (r) => r.msg === 'request' && (r.obj as { path?: string }).path === path,
      );
      return record === undefined ? undefined : { client: (record.obj as { client?: unknown }).client };
    },
    { what: `the access-log line of ${path}`, timeoutMs: 10_000 },
  ).then((found: { client: unknown }) => found.client);
}

describe('PROXY protocol', () => {
  for (const [version, header, client] of [
    ['v1', v1Header, '203.0.113.7'],
    ['v2', v2Header, '198.51.100.9'],
  ] as const) {
    test(`${version}: the upstream and the access log see the address in the header`, async () => {
      const requestId = `pp-${version}`;
      const response = await get(
        await connectWithHeader(portcullis.proxyPort, header(client)),
        true,
        requestId,
        `/${requestId}`,
      );
      assert.equal(response.statusCode, 200, response.body);
      const seen = (JSON.parse(response.body) as EchoResponse).headers;
      assert.equal(seen['x-forwarded-for'], client);
      assert.equal(await loggedClient(`/${requestId}`), client);
    });
  }

  test('the redirect listener reads the header too', async () => {
    const response = await get(
      await connectWithHeader(redirectPort, v1Header('192.0.2.44')),
      false,
      'pp-redirect',
      '/a?b=1',
    );
    assert.equal(response.statusCode, 301);
    assert.equal(response.headers.location, `https://${HOST}:${portcullis.proxyPort}/a?b=1`);
    assert.equal(await loggedClient('/a'), '192.0.2.44');
  });

  test('a connection without a PROXY header is refused', async () => {
    const refused = (port: number, tls: boolean): Promise<boolean> =>
      new Promise((resolve) => {
        const options = {
          host: '127.0.0.1',
          port,
          path: '/',
          headers: { host: HOST },
          agent: false as const,
          rejectUnauthorized: false,
          servername: HOST,
        };
        const req = (tls ? httpsRequest : request)(options, (res) => {
          res.resume();
          resolve(false);
        });
        req.setTimeout(5000, () => req.destroy(new Error('timed out')));
        req.on('error', () => resolve(true));
        req.end();
      });
    assert.equal(await refused(portcullis.proxyPort, true), true, 'HTTPS listener');
    assert.equal(await refused(redirectPort, false), true, 'redirect listener');
  });
});
