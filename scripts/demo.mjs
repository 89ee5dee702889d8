// `npm start`: the quickstart. Starts a demo OIDC provider (demo/idp.mjs) and a demo upstream that
// shows the identity it received (demo/upstream.mjs), then Portcullis all-in-one (with its Envoy)
// on examples/demo.yaml; once every part answers it prints the URL to open and the demo
// credentials. One line per request to the demo app; Ctrl-C stops everything (Envoy drains first).
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startDemoIdp } from '../demo/idp.mjs';
import { startDemoUpstream } from '../demo/upstream.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
// These match examples/demo.yaml.
const PROXY = { host: '127.0.0.1', port: 8080 };
const APP_HOST = 'app.localhost:8080';
const PUBLIC_HOST = 'public.localhost:8080';
const AUTHENTICATE_URL = 'http://authenticate.localhost:8080';
const IDP = { host: '127.0.0.1', port: 9000 };
const UPSTREAM = { host: '127.0.0.1', port: 9080 };
const USER = { login: 'alice', password: 'alice-demo-password' };
const READY_TIMEOUT_MS = 90_000;
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

const log = (line) => console.log(line);

/** GET through Portcullis's listener with a Host header (browsers resolve *.localhost; Node may not). */
function viaProxy(host, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request(
      { ...PROXY, path, headers: { host, accept: 'text/html', ...headers }, timeout: 2000, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, location: res.headers.location ?? '' }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Every part answers as the demo needs: public route, protected route, sign-in to the IdP. */
async function everythingAnswers() {
  const publicRoute = await viaProxy(PUBLIC_HOST, '/healthz');
  if (publicRoute.status !== 200) return `public route answered ${publicRoute.status}`;
  const app = await viaProxy(APP_HOST, '/');
  if (app.status !== 302 || !app.location.startsWith(AUTHENTICATE_URL))
    return `protected route answered ${app.status} ${app.location}`;
  const signIn = new URL(app.location);
  const idp = await viaProxy(signIn.host, `${signIn.pathname}${signIn.search}`);
  if (idp.status !== 302 || !idp.location.startsWith(`http://${IDP.host}:${IDP.port}/`))
    return `sign-in answered ${idp.status} ${idp.location}`;
  return undefined;
}

/** Polls `everythingAnswers` until it passes, Portcullis exits, or READY_TIMEOUT_MS passes. */
async function waitUntilReady(child) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'nothing answered yet';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error('Portcullis exited');
    const problem = await everythingAnswers().catch((err) => err.message);
    if (problem === undefined) return;
    last = problem;
    await delay(250);
  }
  throw new Error(`the demo did not come up within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

/** Portcullis logs JSON (pino); the demo shows each line as `portcullis <level>: <message>`. */
function relay(stream) {
  createInterface({ input: stream }).on('line', (line) => {
    let record;
    try {
      record = JSON.parse(line);
    } catch {
      console.log(line);
      return;
    }
    const detail = record.err?.message ? ` (${record.err.message})` : '';
    console.log(`portcullis ${LEVELS[record.level] ?? record.level}: ${record.msg ?? line}${detail}`);
  });
}

async function main() {
  const idp = await startDemoIdp({
    ...IDP,
    users: [
      {
        ...USER,
        claims: {
          name: 'Alice Example',
          email: 'alice@example.com',
          email_verified: true,
          groups: ['demo-users', 'admins'],
        },
      },
    ],
    client: {
      client_id: 'portcullis-demo',
      client_secret: 'portcullis-demo-secret-not-for-production',
      redirect_uris: [`${AUTHENTICATE_URL}/oauth2/callback`],
      post_logout_redirect_uris: [`${AUTHENTICATE_URL}/.portcullis/signed_out`, `http://${APP_HOST}/`],
    },
    log,
  });
  const upstream = await startDemoUpstream({
    ...UPSTREAM,
    proxy: `${PROXY.host}:${PROXY.port}`,
    routeHost: APP_HOST,
    log,
  });
  log(`demo IdP on ${idp.issuer}, demo app on ${upstream.url}; starting Portcullis and Envoy…`);
  const child = spawn(process.execPath, ['bin/portcullis.mjs', '--config', 'examples/demo.yaml'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  relay(child.stdout);
  relay(child.stderr);
  let exitCode;
  const stop = (code) => {
    exitCode ??= code;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  child.on('exit', async (code) => {
    await Promise.all([idp.close(), upstream.close()]);
    process.exit(exitCode ?? code ?? 1);
  });
  try {
    await waitUntilReady(child);
  } catch (err) {
    console.error(`demo: ${err.message}`);
    stop(1);
    return;
  }
  log(`
Portcullis demo is ready.

  Open      http://${APP_HOST}/
  Sign in   user name: ${USER.login}   password: ${USER.password}   (at the demo IdP)
  Also      http://${APP_HOST}/.portcullis/   (your session, claims and sign-out)
            http://${PUBLIC_HOST}/           (a public route: no sign-in)

Ctrl-C stops everything.
`);
}

main().catch((err) => {
  console.error(`demo: ${err.message}`);
  if (err.code === 'EADDRINUSE')
    console.error('demo: a port the demo needs is in use (8080, 9000, 9080, 5443, 9901)');
  process.exit(1);
});
