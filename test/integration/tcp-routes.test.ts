/**
 * TCP routes end to end with every real part (issue 27, "Tests (real parts)"): Portcullis
 * all-in-one with TLS on its listener and its real Envoy, a real OIDC provider (oidc-provider),
 * Debian's Chromium, and the `portcullis login` / `portcullis tcp` client as child processes.
 * `portcullis login` runs a real programmatic login: its `$BROWSER` is a script that hands the
 * sign-in URL to this test, which completes it in Chromium; the token it caches is what every tunnel
 * then uses. Node does not resolve `*.localhost`, so the client reaches Envoy through a CONNECT proxy
 * (HTTPS_PROXY) that sends those names to 127.0.0.1; the test CA is passed with --ca-cert.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { fileTokenCache, tokenCachePath } from '../../src/cli/token-cache.js';
import { BROWSER_TIMEOUT_MS, launchBrowser, signInAtIdp } from '../support/browser.js';
import {
  echoRoundTrip,
  echoTransfer,
  rawConnect,
  startClient,
  startCountingEcho,
  startLocalhostProxy,
  type ClientProcess,
  type CountingEcho,
} from '../support/tcp-parts.js';
import { startTlsPortcullis, type TlsPortcullis } from '../support/tcp-portcullis.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { waitFor } from '../support/wait.js';

const CLIENT = { clientId: 'portcullis-tcp-routes', clientSecret: 'tcp-routes-secret' };
/** The CONNECT authorities of the routes (the port is only a name here: Envoy listens elsewhere). */
const DB = 'db.localhost:5432';
const DENIED = 'denied.localhost:5432';
const BASTION_TARGET = 'db.internal:5432';
const NAMES = [
  'db.localhost',
  'denied.localhost',
  'bastion.localhost',
  'app.localhost',
  'authenticate.localhost',
];
const MIB = 1024 * 1024;

describe('TCP routes through the real Envoy', () => {
  let idp: TestIdp;
  let echo: CountingEcho;
  let deniedEcho: CountingEcho;
  let bastionEcho: CountingEcho;
  let appUpstream: CountingEcho;
  let proxy: Awaited<ReturnType<typeof startLocalhostProxy>>;
  let portcullis: TlsPortcullis;
  let browser: Browser;
  let home: string;
  let env: Record<string, string>;
  /** The token `portcullis login` cached (set by the first test). */
  let token: string | undefined;
  /** A `portcullis tcp` listener for DB, started once the login is done. */
  let listener: ClientProcess | undefined;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    idp = await startTestIdp();
    cleanups.push(() => idp.close());
    [echo, deniedEcho, bastionEcho, appUpstream] = await Promise.all([
      startCountingEcho(),
      startCountingEcho(),
      startCountingEcho(),
      startCountingEcho(),
    ]);
    for (const server of [echo, deniedEcho, bastionEcho, appUpstream]) cleanups.push(() => server.close());
    proxy = await startLocalhostProxy();
    cleanups.push(() => proxy.close());
    portcullis = await startTlsPortcullis(NAMES, (port) => {
      const authenticateOrigin = `https://authenticate.localhost:${port}`;
      idp.addClient({ ...CLIENT, redirectUris: [`${authenticateOrigin}/oauth2/callback`] });
      return {
        authenticate_service_url: authenticateOrigin,
        idp_provider: 'oidc',
        idp_provider_url: idp.issuer,
        idp_client_id: CLIENT.clientId,
        idp_client_secret: CLIENT.clientSecret,
        routes: [
          { from: `tcp+https://${DB}`, to: `tcp://127.0.0.1:${echo.port}`, allowed_domains: ['example.com'] },
          {
            from: `tcp+https://${DENIED}`,
            to: `tcp://127.0.0.1:${deniedEcho.port}`,
            allowed_users: ['mallory@example.org'],
          },
          {
            from: `tcp+https://bastion.localhost/${BASTION_TARGET}`,
            to: `tcp://127.0.0.1:${bastionEcho.port}`,
            allowed_domains: ['example.com'],
          },
          {
            from: 'https://app.localhost',
            to: `http://127.0.0.1:${appUpstream.port}`,
            allowed_domains: ['example.com'],
          },
        ],
      };
    });
    cleanups.push(() => portcullis.stop());
    home = join(portcullis.dir, 'home');
    mkdirSync(home);
    env = {
      HOME: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      HTTPS_PROXY: proxy.url,
      BROWSER: browserScript(join(home, 'browser.sh'), join(home, 'sign-in-urls')),
    };
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** `--via` (Portcullis's listener under `host`) and `--ca-cert`, which every client call takes. */
  const reach = (host: string): string[] => [
    '--via',
    `https://${host}:${portcullis.port}`,
    '--ca-cert',
    portcullis.certificate.certFile,
  ];

  /** A client process that is stopped when the suite ends. */
  function client(args: readonly string[], own: Record<string, string> = {}): ClientProcess {
    const started = startClient(args, { ...env, ...own });
    cleanups.push(() => started.stop());
    return started;
  }

  /** Stores the login's token for another Portcullis origin (the cache is per origin host). */
  async function seedToken(origin: string): Promise<void> {
    assert.ok(token !== undefined, 'no token: the login test did not pass');
    await fileTokenCache(tokenCachePath(env)).put(origin, token);
  }

  async function tunnelPort(): Promise<number> {
    assert.ok(token !== undefined, 'no token: the login test did not pass');
    listener ??= client(['tcp', DB, ...reach('db.localhost'), '--no-browser']);
    return listener.listeningPort();
  }

  test('portcullis login: a real programmatic login completed in Chromium caches a token', async (t) => {
    const origin = `db.localhost:${portcullis.port}`;
    const login = client([
      'login',
      '--url',
      `https://${origin}`,
      '--ca-cert',
      portcullis.certificate.certFile,
    ]);
    const urlFile = join(home, 'sign-in-urls');
    const signInUrl = await waitFor(
      async () => {
        if (login.child.exitCode !== null) throw new Error(`login exited: ${login.stderr()}`);
        return existsSync(urlFile) ? readFileSync(urlFile, 'utf8').split('\n')[0] : undefined;
      },
      { what: 'the client to open the sign-in URL in its $BROWSER', timeoutMs: 20_000 },
    );
    assert.ok(signInUrl.startsWith(`https://authenticate.localhost:${portcullis.port}/`), signInUrl);
    // The test certificate is self-signed: Chromium is told to accept it, Node's client trusts it.
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    t.after(() => context.close());
    context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
    const page = await context.newPage();
    await page.goto(signInUrl);
    assert.equal(new URL(page.url()).origin, idp.issuer, `the sign-in URL led to ${page.url()}, not the IdP`);
    await signInAtIdp(page, idp.user);
    await page.waitForURL((url) => url.hostname === '127.0.0.1' && url.pathname === '/cb');
    assert.match(await page.locator('body').innerText(), /signed in/i);
    assert.equal(await login.exited, 0, login.stderr());
    assert.match(login.stderr(), new RegExp(`signed in to ${origin.replace('.', '\\.')}`));
    token = await fileTokenCache(tokenCachePath(env)).get(origin);
    assert.ok(token !== undefined && token.length > 0, 'no token in the cache');
    assert.ok(!login.stderr().includes(token), 'the token was printed');
    // Node cannot resolve db.localhost: the client went through HTTPS_PROXY, as it should.
    assert.ok(proxy.authorities.includes(origin), `the proxy saw ${proxy.authorities.join(', ')}`);
  });

  // Issue 33 item 1: the handoff goes to the origin Portcullis serves the route on (its listener's
  // port), not to port 443 of the name the client sent as Host behind `--via <IP>`.
  test('portcullis tcp --via https://<IP>:<port> --no-browser: the sign-in in Chromium gives the client its token', async (t) => {
    // A HOME of its own: no token is cached there, so the client signs in first.
    const fresh = join(home, 'via-ip');
    mkdirSync(fresh);
    const piped = client(
      [
        'tcp',
        DB,
        '--via',
        `https://127.0.0.1:${portcullis.port}`,
        '--ca-cert',
        portcullis.certificate.certFile,
        '--no-browser',
        '--listen',
        '-',
      ],
      // The address is dialled directly (the test's proxy serves only `*.localhost` names).
      { HOME: fresh, XDG_CONFIG_HOME: join(fresh, 'config'), NO_PROXY: '127.0.0.1' },
    );
    const signInUrl = await waitFor(
      async () => {
        if (piped.child.exitCode !== null) throw new Error(`the client exited: ${piped.stderr()}`);
        return /open this URL in a browser:\n(\S+)/.exec(piped.stderr())?.[1];
      },
      { what: 'the client to print the sign-in URL', timeoutMs: 20_000 },
    );
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    t.after(() => context.close());
    context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
    const page = await context.newPage();
    const handoffs: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/.portcullis/callback') handoffs.push(request.url());
    });
    await page.goto(signInUrl);
    await signInAtIdp(page, idp.user);
    await page.waitForURL((url) => url.hostname === '127.0.0.1' && url.pathname === '/cb');
    assert.deepEqual(
      handoffs.map((url) => new URL(url).origin),
      [`https://db.localhost:${portcullis.port}`],
    );
    assert.equal(await converse(piped, 'after a login via an IP\n'), 'after a login via an IP\n');
    assert.equal(await piped.exited, 0, piped.stderr());
  });

  test('bytes round-trip through portcullis tcp', async () => {
    const before = echo.connections();
    const port = await tunnelPort();
    assert.equal(await echoRoundTrip(port, 'hello through the tunnel\n'), 'hello through the tunnel\n');
    assert.equal(echo.connections(), before + 1);
  });

  test('a 100 MiB transfer arrives intact', async (t) => {
    const port = await tunnelPort();
    const result = await echoTransfer(port, 100 * MIB, 120_000);
    t.diagnostic(`100 MiB echoed through the tunnel in ${Math.round(result.ms)} ms`);
    assert.equal(result.receivedBytes, 100 * MIB);
    assert.equal(result.receivedSha256, result.sentSha256, 'the bytes came back changed');
  });

  test('50 parallel connections each round-trip', async () => {
    const port = await tunnelPort();
    const before = echo.connections();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => echoRoundTrip(port, `connection ${i}\n`)),
    );
    answers.forEach((answer, i) => assert.equal(answer, `connection ${i}\n`));
    assert.equal(echo.connections(), before + 50);
  });

  test('--listen - pipes stdin and stdout', async () => {
    assert.ok(token !== undefined, 'no token: the login test did not pass');
    const piped = client(['tcp', DB, ...reach('db.localhost'), '--no-browser', '--listen', '-']);
    assert.equal(await converse(piped, 'SSH-2.0-portcullis-test\r\n'), 'SSH-2.0-portcullis-test\r\n');
    assert.equal(await piped.exited, 0, piped.stderr());
  });

  test('the bastion form reaches its target', async () => {
    await seedToken(`bastion.localhost:${portcullis.port}`);
    const before = bastionEcho.connections();
    const piped = client([
      'tcp',
      BASTION_TARGET,
      ...reach('bastion.localhost'),
      '--no-browser',
      '--listen',
      '-',
    ]);
    assert.equal(await converse(piped, 'through the bastion\n'), 'through the bastion\n');
    assert.equal(await piped.exited, 0, piped.stderr());
    assert.equal(bastionEcho.connections(), before + 1);
  });

  // Why the client speaks HTTP/2 CONNECT: Envoy's HTTP/1.1 CONNECT closes the whole tunnel when the
  // client half-closes (as the client does when its side ends), losing the upstream's reply in
  // flight; over HTTP/2 the half-close is END_STREAM and the other direction stays open.
  test('a client that half-closes right after sending still gets the whole reply', async () => {
    const port = await tunnelPort();
    const lost: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const answer = await echoRoundTrip(port, `half-closed ${i}\n`, true);
      if (answer !== `half-closed ${i}\n`) lost.push(i);
    }
    assert.deepEqual(
      lost,
      [],
      `the reply was lost after the client's half-close on tries ${lost.join(', ')} of 5`,
    );
  });

  test('a CONNECT without a token is refused and no byte reaches the upstream', async (t) => {
    const [connections, bytes] = [echo.connections(), echo.bytes()];
    const answer = await rawConnect({
      port: portcullis.port,
      servername: 'db.localhost',
      ca: portcullis.certificate.certPem,
      authority: DB,
    });
    t.diagnostic(`CONNECT ${DB} without a token: ${answer.status} ${answer.body}`);
    assert.ok(
      answer.status === 401 || (answer.status >= 300 && answer.status < 400),
      `${answer.status} ${answer.body}`,
    );
    assert.equal(echo.connections(), connections, 'the upstream saw a connection');
    assert.equal(echo.bytes(), bytes);
  });

  test("the denied user's route refuses the CONNECT with the reason, and no byte reaches the upstream", async () => {
    assert.ok(token !== undefined, 'no token: the login test did not pass');
    const answer = await rawConnect({
      port: portcullis.port,
      servername: 'denied.localhost',
      ca: portcullis.certificate.certPem,
      authority: DENIED,
      token,
    });
    assert.equal(answer.status, 403, answer.body);
    // The client says so in one line, naming the route, and exits non-zero.
    await seedToken(`denied.localhost:${portcullis.port}`);
    const piped = client(['tcp', DENIED, ...reach('denied.localhost'), '--no-browser', '--listen', '-']);
    piped.child.stdin.end('must not arrive\n');
    assert.equal(await piped.exited, 1, piped.stderr());
    const lines = piped.stderr().trim().split('\n');
    assert.equal(lines.length, 1, piped.stderr());
    assert.match(lines[0] ?? '', new RegExp(`^portcullis: access to ${DENIED} was denied \\(403\\)`));
    assert.equal(deniedEcho.connections(), 0, 'the denied route reached its upstream');
    assert.equal(deniedEcho.bytes(), 0);
  });

  test('a CONNECT to an HTTP route is refused', async (t) => {
    assert.ok(token !== undefined, 'no token: the login test did not pass');
    for (const authority of ['app.localhost:443', `app.localhost:${portcullis.port}`]) {
      const answer = await rawConnect({
        port: portcullis.port,
        servername: 'app.localhost',
        ca: portcullis.certificate.certPem,
        authority,
        token,
      });
      t.diagnostic(`CONNECT ${authority}: ${answer.status} ${answer.body}`);
      assert.ok(answer.status >= 400, `CONNECT ${authority}: ${answer.status} ${answer.body}`);
    }
    assert.equal(appUpstream.connections(), 0, 'the HTTP route tunnelled to its upstream');
  });

  test('the listener is still serving after the refusals', async () => {
    const port = await tunnelPort();
    assert.equal(await echoRoundTrip(port, 'still here\n'), 'still here\n');
  });
});

/**
 * Writes `message` on the client's stdin and reads its stdout until as many bytes came back (as an
 * SSH session is interactive), then closes stdin; resolves with what came back.
 */
async function converse(piped: ClientProcess, message: string): Promise<string> {
  const chunks: Buffer[] = [];
  piped.child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  piped.child.stdin.write(message);
  const expected = Buffer.byteLength(message);
  await waitFor(
    async () => {
      if (piped.child.exitCode !== null) throw new Error(`the client exited: ${piped.stderr()}`);
      return Buffer.concat(chunks).length >= expected;
    },
    { what: "the echo on the client's stdout", timeoutMs: 20_000, intervalMs: 10 },
  );
  piped.child.stdin.end();
  return Buffer.concat(chunks).toString('utf8');
}

/** A `$BROWSER` that appends the URL it is given to `urlFile` (the test opens it in Chromium). */
function browserScript(path: string, urlFile: string): string {
  writeFileSync(path, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${urlFile}'\n`);
  chmodSync(path, 0o755);
  return path;
}
