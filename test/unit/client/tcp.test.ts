// `portcullis tcp` and `portcullis login` against a fake Portcullis: an HTTP/2 server whose CONNECT
// streams stand in for Envoy + ext_authz (and an HTTP/1.1-only one for the client's fallback). The client code under test is the real one (run.ts), in-process with its
// own streams, token cache directory and a fake browser that performs the sign-in redirect.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { describe, test } from 'node:test';
import { runLogin, runTcp } from '../../../src/cli/run.js';
import type { TcpArgs } from '../../../src/cli/run.js';
import { fakeBrowser, startConnectProxy, startEchoServer } from '../../support/fake-connect-server.js';
import { waitFor } from '../../support/wait.js';
import { ROUTE, TARGET, cachedToken, drain, harness, seedToken, useStandIn } from './client-harness.js';

describe('portcullis tcp and login against a stand-in for Envoy', () => {
  const standIn = useStandIn();
  const args = (extra: Partial<TcpArgs> = {}): TcpArgs => standIn.args(extra);

  test('stdin/stdout mode: a cached token opens the tunnel and bytes round-trip with half-close', async (t) => {
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('cached');
    seedToken(h.configHome, ROUTE, 'cached');
    const before = standIn.fake.connects.length;
    const code = runTcp(args({ listen: '-' }), h.io);
    const output = drain(h.stdout);
    h.stdin.end('hello through the tunnel');
    assert.equal(await code, 0, h.stderr());
    assert.equal((await output).toString(), 'hello through the tunnel');
    const seen = standIn.fake.connects.slice(before);
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0], {
      authority: TARGET,
      httpVersion: '2.0',
      authorization: 'Portcullis cached',
      accept: 'application/json',
      servername: ROUTE,
    });
    assert.equal(h.visits.length, 0, 'a cached token needs no sign-in');
    assert.doesNotMatch(h.stderr(), /cached/, 'the token is never printed');
  });

  test('half-close: the target answers only after the client ended its side, and the answer arrives', async (t) => {
    const countOnEnd = createNetServer({ allowHalfOpen: true }, (socket) => {
      let size = 0;
      socket.on('data', (chunk: Buffer) => (size += chunk.length));
      socket.once('end', () => socket.end(`got ${size} bytes`));
    });
    countOnEnd.listen(0, '127.0.0.1');
    await once(countOnEnd, 'listening');
    t.after(() => countOnEnd.close());
    standIn.fake.upstreams.set(`${ROUTE}:7`, (countOnEnd.address() as AddressInfo).port);
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('half');
    seedToken(h.configHome, ROUTE, 'half');
    const code = runTcp(args({ listen: '-', target: `${ROUTE}:7` }), h.io);
    const output = drain(h.stdout);
    h.stdin.end(Buffer.alloc(100_000, 1));
    assert.equal(await code, 0, h.stderr());
    assert.equal((await output).toString(), 'got 100000 bytes');
  });

  test('half-close the other way (listen mode): after the target ended its side it still receives', async (t) => {
    let late = '';
    const gotLate = new Promise<void>((resolve) => {
      const greeter = createNetServer({ allowHalfOpen: true }, (socket) => {
        socket.end('hello');
        socket.on('data', (chunk: Buffer) => (late += chunk.toString()));
        socket.once('end', () => resolve());
      });
      greeter.listen(0, '127.0.0.1', () =>
        standIn.fake.upstreams.set(`${ROUTE}:8`, (greeter.address() as AddressInfo).port),
      );
      t.after(() => greeter.close());
    });
    await waitFor(async () => standIn.fake.upstreams.has(`${ROUTE}:8`), { what: 'the greeter to listen' });
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('other-way');
    seedToken(h.configHome, ROUTE, 'other-way');
    const code = runTcp(args({ listen: '127.0.0.1:0', target: `${ROUTE}:8` }), h.io);
    const port = await waitFor(async () => /listening on 127\.0\.0\.1:(\d+)/.exec(h.stderr())?.[1], {
      what: 'the listening line',
    });
    const socket = connect({ host: '127.0.0.1', port: Number(port), allowHalfOpen: true });
    // Not drain(): an async iterator destroys the socket at the end, and this one still writes.
    let greeting = '';
    socket.on('data', (chunk: Buffer) => (greeting += chunk.toString()));
    await once(socket, 'end');
    assert.equal(greeting, 'hello', 'the target ended its side after the greeting');
    socket.end('late bytes');
    await gotLate;
    assert.equal(late, 'late bytes');
    h.abort();
    assert.equal(await code, 0);
  });

  test('without a cached token it signs in first, caches the token and tunnels', async (t) => {
    const h = harness(t, standIn.fake);
    const code = runTcp(args({ listen: '-' }), h.io);
    const output = drain(h.stdout);
    h.stdin.end('ping');
    assert.equal(await code, 0, h.stderr());
    assert.equal((await output).toString(), 'ping');
    assert.equal(h.visits.length, 1, 'one browser sign-in');
    const token = cachedToken(h.configHome, ROUTE);
    assert.match(token ?? '', /^token-\d+$/);
    assert.equal(standIn.fake.logins.at(-1)?.host, ROUTE, 'the login asks the route host');
    assert.match(standIn.fake.logins.at(-1)?.redirectUri ?? '', /^http:\/\/127\.0\.0\.1:\d+\/cb$/);
    assert.doesNotMatch(h.stderr(), new RegExp(token ?? 'never'), 'the token is never printed');
  });

  test('a 401 to CONNECT signs in again and retries once with the new token', async (t) => {
    const h = harness(t, standIn.fake);
    seedToken(h.configHome, ROUTE, 'revoked');
    const before = standIn.fake.connects.length;
    const code = runTcp(args({ listen: '-' }), h.io);
    const output = drain(h.stdout);
    h.stdin.end('retry');
    assert.equal(await code, 0, h.stderr());
    assert.equal((await output).toString(), 'retry');
    const seen = standIn.fake.connects.slice(before).map((c) => c.authorization);
    assert.equal(seen.length, 2);
    assert.equal(seen[0], 'Portcullis revoked');
    assert.equal(seen[1], `Portcullis ${cachedToken(h.configHome, ROUTE)}`);
    assert.notEqual(
      cachedToken(h.configHome, ROUTE),
      'revoked',
      'the refused token was replaced in the cache',
    );
  });

  test('with --no-browser the sign-in URL is printed on stderr', async (t) => {
    const h = harness(t, standIn.fake, { browser: false });
    const code = runTcp(args({ listen: '-', browser: false }), h.io);
    const url = await waitFor(async () => /^(https:\/\/idp\.invalid\/\S+)$/m.exec(h.stderr())?.[1], {
      what: 'the sign-in URL on stderr',
    });
    await fakeBrowser(standIn.fake)(url);
    const output = drain(h.stdout);
    h.stdin.end('manual');
    assert.equal(await code, 0, h.stderr());
    assert.equal((await output).toString(), 'manual');
  });

  test('a 403 is one line naming the route and the reason, exit code 1, nothing reaches the target', async (t) => {
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('denied-user');
    seedToken(h.configHome, ROUTE, 'denied-user');
    standIn.fake.denied.add(TARGET);
    t.after(() => standIn.fake.denied.delete(TARGET));
    const received = standIn.echo.received();
    h.stdin.end('must not arrive');
    assert.equal(await runTcp(args({ listen: '-' }), h.io), 1);
    assert.equal(
      h.stderr(),
      `portcullis: access to ${TARGET} was denied (403): Your account is not allowed on this route. (request id r-403)\n`,
    );
    assert.equal(standIn.echo.received(), received, 'no byte reached the target');
  });

  test('a 503 says the target is unreachable', async (t) => {
    const h = harness(t, standIn.fake);
    standIn.fake.validTokens.add('ok');
    seedToken(h.configHome, ROUTE, 'ok');
    const closed = await startEchoServer();
    closed.server.close();
    standIn.fake.upstreams.set(`${ROUTE}:1`, closed.port);
    const code = await runTcp(args({ listen: '-', target: `${ROUTE}:1` }), { ...h.io });
    assert.equal(code, 1);
    assert.match(
      h.stderr(),
      /^portcullis: the target db\.example\.test:1 is unreachable \(503\): upstream connect error/,
    );
    assert.equal(h.stderr().trim().split('\n').length, 1, h.stderr());
  });

  test('an untrusted certificate says to pass --ca-cert, in one line', async (t) => {
    const h = harness(t, standIn.fake);
    assert.equal(await runTcp(args({ listen: '-', caCert: undefined }), h.io), 1);
    assert.match(
      h.stderr(),
      /^portcullis: Portcullis's certificate at 127\.0\.0\.1:\d+ is not trusted .*--ca-cert/,
    );
    assert.equal(h.stderr().split('\n').length, 2, h.stderr());
  });

  test('listen mode: each local connection gets its own tunnel; one sign-in serves them all', async (t) => {
    const h = harness(t, standIn.fake);
    const code = runTcp(args({ listen: '127.0.0.1:0' }), h.io);
    const port = await waitFor(async () => /listening on 127\.0\.0\.1:(\d+)/.exec(h.stderr())?.[1], {
      what: 'the listening line',
    });
    const roundTrip = async (text: string): Promise<string> => {
      const socket: Socket = connect({ host: '127.0.0.1', port: Number(port) });
      await once(socket, 'connect');
      const answer = drain(socket);
      socket.end(text);
      return (await answer).toString();
    };
    const answers = await Promise.all(['one', 'two', 'three', 'four'].map(roundTrip));
    assert.deepEqual(answers, ['one', 'two', 'three', 'four']);
    assert.equal(h.visits.length, 1, 'concurrent connections share one sign-in');
    h.abort();
    assert.equal(await code, 0);
  });

  test('HTTPS_PROXY: the TLS connection goes through the proxy; NO_PROXY bypasses it', async (t) => {
    const proxy = await startConnectProxy();
    const saved = { HTTPS_PROXY: process.env.HTTPS_PROXY, NO_PROXY: process.env.NO_PROXY };
    t.after(async () => {
      for (const [key, value] of Object.entries(saved))
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      await proxy.close();
    });
    standIn.fake.validTokens.add('proxied');
    delete process.env.NO_PROXY;
    process.env.HTTPS_PROXY = `http://127.0.0.1:${proxy.port}`;

    const h = harness(t, standIn.fake);
    seedToken(h.configHome, ROUTE, 'proxied');
    const output = drain(h.stdout);
    h.stdin.end('via proxy');
    assert.equal(await runTcp(args({ listen: '-' }), h.io), 0, h.stderr());
    assert.equal((await output).toString(), 'via proxy');
    assert.deepEqual(proxy.authorities, [`127.0.0.1:${standIn.fake.port}`]);

    process.env.NO_PROXY = 'localhost,127.0.0.1';
    const direct = harness(t, standIn.fake);
    seedToken(direct.configHome, ROUTE, 'proxied');
    const directOutput = drain(direct.stdout);
    direct.stdin.end('direct');
    assert.equal(await runTcp(args({ listen: '-' }), direct.io), 0, direct.stderr());
    assert.equal((await directOutput).toString(), 'direct');
    assert.equal(proxy.authorities.length, 1, 'NO_PROXY kept the second connection off the proxy');
  });

  test('login: the standIn.fake browser completes the redirect; the token is cached 0600 and never printed', async (t) => {
    const h = harness(t, standIn.fake);
    const code = await runLogin(
      {
        url: `https://${ROUTE}`,
        via: `https://127.0.0.1:${standIn.fake.port}`,
        browser: true,
        caCert: standIn.cert.certFile,
        insecureSkipVerify: false,
      },
      h.io,
    );
    assert.equal(code, 0, h.stderr());
    const token = cachedToken(h.configHome, ROUTE);
    assert.ok(token !== undefined && standIn.fake.validTokens.has(token));
    assert.match(h.stderr(), /signed in to db\.example\.test; the token is cached in /);
    assert.doesNotMatch(h.stderr(), new RegExp(token));
  });

  test('login gives up after its timeout when the browser never comes back, closing the listener', async (t) => {
    const h = harness(t, standIn.fake, { browser: false });
    const io = { ...h.io, signInTimeoutMs: 200 };
    const code = await runLogin(
      {
        url: `https://${ROUTE}`,
        via: `https://127.0.0.1:${standIn.fake.port}`,
        browser: false,
        caCert: standIn.cert.certFile,
        insecureSkipVerify: false,
      },
      io,
    );
    assert.equal(code, 1);
    assert.match(h.stderr(), /portcullis: no sign-in completed within 200 ms\n$/);
    const redirect = standIn.fake.logins.at(-1)?.redirectUri ?? '';
    await assert.rejects(fetch(redirect), 'the callback listener is closed');
  });

  test('Ctrl-C during the sign-in wait cancels it with exit code 130', async (t) => {
    const h = harness(t, standIn.fake, { browser: false });
    const code = runLogin(
      {
        url: `https://${ROUTE}`,
        via: `https://127.0.0.1:${standIn.fake.port}`,
        browser: false,
        caCert: standIn.cert.certFile,
        insecureSkipVerify: false,
      },
      h.io,
    );
    await waitFor(async () => h.stderr().includes('open this URL'), { what: 'the sign-in URL' });
    h.abort();
    assert.equal(await code, 130);
    assert.match(h.stderr(), /portcullis: sign-in cancelled\n$/);
  });
});
