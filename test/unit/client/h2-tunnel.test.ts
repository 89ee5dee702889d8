// The client's HTTP/2 CONNECT against the fake Portcullis: tunnels share one HTTP/2 session per
// endpoint, a second session opens when the server's stream limit is reached, and a server
// without h2 gets HTTP/1.1 CONNECT (said on stderr only with --verbose). The tunnel connection
// offers the tunnel marker in ALPN (Portcullis's Envoy then uses its tunnel chain's windows).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { describe, test } from 'node:test';
import { TUNNEL_ALPN_MARKER } from '../../../src/contract/names.js';
import { resolveEndpoint } from '../../../src/cli/endpoint.js';
import { TunnelSessions } from '../../../src/cli/h2-tunnel.js';
import { runTcp } from '../../../src/cli/run.js';
import type { TcpArgs } from '../../../src/cli/run.js';
import { startFakePortcullis } from '../../support/fake-connect-server.js';
import { waitFor } from '../../support/wait.js';
import { ROUTE, TARGET, drain, harness, seedToken, useStandIn } from './client-harness.js';

describe('portcullis tcp over HTTP/2 CONNECT', () => {
  const standIn = useStandIn();
  const args = (extra: Partial<TcpArgs> = {}): TcpArgs => standIn.args(extra);

  test('listen mode: the tunnels share one HTTP/2 connection to Portcullis', async (t) => {
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('shared');
    seedToken(h.configHome, ROUTE, 'shared');
    const sessionsBefore = standIn.fake.sessionsSeen();
    const code = runTcp(args({ listen: '127.0.0.1:0' }), h.io);
    const port = await waitFor(async () => /listening on 127\.0\.0\.1:(\d+)/.exec(h.stderr())?.[1], {
      what: 'the listening line',
    });
    const roundTrip = async (text: string): Promise<string> => {
      const socket: Socket = connect({ host: '127.0.0.1', port: Number(port) });
      const answer = drain(socket);
      socket.end(text);
      return (await answer).toString();
    };
    assert.equal(await roundTrip('first'), 'first');
    const texts = Array.from({ length: 8 }, (_, i) => `parallel ${i}`);
    assert.deepEqual(await Promise.all(texts.map(roundTrip)), texts);
    assert.equal(standIn.fake.sessionsSeen() - sessionsBefore, 1, 'one HTTP/2 session for all the tunnels');
    h.abort();
    assert.equal(await code, 0);
  });

  test('when the server allows no more streams on the session, the next tunnel opens a second one', async (t) => {
    const narrow = await startFakePortcullis(standIn.cert.certPem, standIn.cert.keyPem, {
      maxConcurrentStreams: 2,
    });
    t.after(() => narrow.close());
    narrow.upstreams.set(TARGET, standIn.echo.port);
    narrow.validTokens.add('narrow');
    const h = harness(t, narrow);
    seedToken(h.configHome, ROUTE, 'narrow');
    const code = runTcp(
      { ...args({ listen: '127.0.0.1:0' }), via: `https://127.0.0.1:${narrow.port}` },
      h.io,
    );
    const port = await waitFor(async () => /listening on 127\.0\.0\.1:(\d+)/.exec(h.stderr())?.[1], {
      what: 'the listening line',
    });
    // Three tunnels held open at once (each answered once before the next starts).
    const open: Socket[] = [];
    for (const text of ['a', 'b', 'c']) {
      const socket = connect({ host: '127.0.0.1', port: Number(port) });
      open.push(socket);
      socket.write(text);
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      assert.equal(chunk.toString(), text);
    }
    assert.equal(narrow.sessionsSeen(), 2, 'two streams on the first session, the third on a second');
    for (const socket of open) socket.destroy();
    h.abort();
    assert.equal(await code, 0);
  });

  test('a server without HTTP/2 gets HTTP/1.1 CONNECT (said only with --verbose); half-close still works', async (t) => {
    const http1 = await startFakePortcullis(standIn.cert.certPem, standIn.cert.keyPem, { http1: true });
    t.after(() => http1.close());
    http1.upstreams.set(TARGET, standIn.echo.port);
    http1.validTokens.add('h1');
    for (const verbose of [false, true]) {
      const h = harness(t, http1);
      seedToken(h.configHome, ROUTE, 'h1');
      const code = runTcp(
        { ...args({ listen: '-', verbose }), via: `https://127.0.0.1:${http1.port}` },
        h.io,
      );
      const output = drain(h.stdout);
      h.stdin.end(`over HTTP/1.1 ${verbose}`);
      assert.equal(await code, 0, h.stderr());
      assert.equal((await output).toString(), `over HTTP/1.1 ${verbose}`);
      assert.equal(http1.connects.at(-1)?.httpVersion, '1.1');
      if (verbose)
        assert.match(
          h.stderr(),
          /^portcullis: db\.example\.test does not speak HTTP\/2 .*HTTP\/1\.1 CONNECT\n$/,
        );
      else assert.equal(h.stderr(), '', 'the fallback is silent without --verbose');
    }
  });

  test('the tunnel connection offers h2, HTTP/1.1 and the tunnel marker in ALPN; the HTTP/1.1 fallback only HTTP/1.1', async (t) => {
    const offers: string[][] = [];
    const server = createTlsServer({
      cert: standIn.cert.certPem,
      key: standIn.cert.keyPem,
      ALPNCallback: ({ protocols }) => {
        offers.push(protocols);
        return 'http/1.1';
      },
    });
    server.on('secureConnection', (socket) => socket.destroy());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    t.after(() => server.close());
    const endpoint = resolveEndpoint(
      new URL(`https://${ROUTE}`),
      new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`),
      { ca: standIn.cert.certPem, insecureSkipVerify: false },
    );
    const sessions = new TunnelSessions(endpoint);
    const transport = await sessions.transport();
    assert.equal(transport.kind, 'h1', 'a server that selects HTTP/1.1 gets HTTP/1.1 CONNECT');
    if (transport.kind === 'h1') transport.socket.destroy();
    sessions.close();
    assert.deepEqual(offers, [['h2', 'http/1.1', TUNNEL_ALPN_MARKER], ['http/1.1']]);
  });
});
