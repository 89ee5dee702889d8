/**
 * No secret in the logs at debug (issue 33 item 8): a browser sign-in, a programmatic login and a
 * sign-out through Portcullis all-in-one at `log_level: debug` with its real Envoy (at debug too:
 * `proxy_log_level: debug`, every logger), a real OIDC provider and Chromium. Every secret the flows carried is
 * collected from the browser's side (the gRPC credential, OAuth codes and states, every cookie
 * value Portcullis set, handoffs, the programmatic token, the sign-out CSRF token) and none may
 * appear in any record Portcullis logged, Envoy's forwarded lines and access log included.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage, signInAtIdp } from '../support/browser.js';
import { sendToListener as send } from '../support/listener-request.js';
import type { TestPortcullis } from '../support/portcullis.js';
import { startSignInRig } from '../support/sign-in-envoy.js';
import type { TestIdp } from '../support/test-idp.js';
import { waitFor } from '../support/wait.js';
import { SENSITIVE_ENVOY_COMPONENTS } from '../../src/envoy/log-lines.js';

const SECRET_PARAMS = ['code', 'state', 'portcullis_handoff', 'portcullis_jwt', 'portcullis_programmatic'];

let idp: TestIdp;
let portcullis: TestPortcullis;
let browser: Browser;
let port: number;
let appOrigin: string;
let authenticateOrigin: string;
let config: Record<string, unknown>;
const cleanups: (() => unknown)[] = [];
/** Secret values seen on the wire, by kind (for the failure message). */
const secrets = new Map<string, string>();

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

before(async () => {
  const rig = await startSignInRig({
    extraConfig: {
      log_level: 'debug',
      // Every Envoy logger at debug: redaction must hold on its own (the last test checks that
      // without proxy_log_level, the secret-bearing loggers stay at info as well).
      proxy_log_level: 'debug',
    },
  });
  cleanups.push(() => rig.stop());
  ({ idp, portcullis, port, appOrigin, authenticateOrigin, config } = rig);
  browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  secrets.set('gRPC credential', portcullis.running.grpcCredential);
  secrets.set('shared_secret', String(config['shared_secret']));
  secrets.set('cookie_secret', String(config['cookie_secret']));
});

/** Records every secret a page's traffic to Portcullis carries: query values, cookies, form fields. */
function watch(page: Page): void {
  const ours = (url: string): boolean => url.startsWith(appOrigin) || url.startsWith(authenticateOrigin);
  page.on('request', (request) => {
    const url = new URL(request.url());
    for (const name of SECRET_PARAMS) {
      const value = url.searchParams.get(name);
      if (value !== null && value.length >= 8) secrets.set(`${name} in ${url.pathname}`, value);
    }
    const form = request.postData();
    const csrf = form === null ? null : new URLSearchParams(form).get('portcullis_csrf');
    if (csrf !== null && csrf.length >= 8) secrets.set('sign-out token', csrf);
  });
  page.on('response', async (response) => {
    if (!ours(response.url())) return;
    for (const header of await response.headersArray()) {
      if (header.name.toLowerCase() !== 'set-cookie') continue;
      const [pair = ''] = header.value.split(';');
      const value = pair.slice(pair.indexOf('=') + 1);
      if (value.length >= 8) secrets.set(`cookie ${pair.slice(0, pair.indexOf('='))}`, value);
    }
  });
}

test('a debug-level sign-in, programmatic login and sign-out log none of their secrets', async (t) => {
  // Browser sign-in, then sign-out with the user page's button.
  const { context, page } = await openPage(browser, t);
  watch(page);
  await page.goto(`${appOrigin}/`);
  await signInAtIdp(page, idp.user);
  await page.waitForURL(`${appOrigin}/`);
  const session = (await context.cookies(appOrigin)).find((cookie) => cookie.name === '_portcullis');
  assert.ok(session !== undefined, 'signed in');
  secrets.set('session handle', session.value);
  await page.goto(`${appOrigin}/.portcullis/`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.origin === idp.issuer);

  // Programmatic login to a loopback callback, then a request with the token.
  let received: URL | undefined;
  const listener = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname === '/cb') received = url;
    res.end('ok');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => listener.close(resolve)));
  const callback = `http://localhost:${(listener.address() as AddressInfo).port}/cb`;
  const login = await send(
    port,
    `app.localhost:${port}`,
    `/.portcullis/api/v1/login?portcullis_redirect_uri=${encodeURIComponent(callback)}`,
  );
  assert.equal(login.status, 200, login.body);
  const second = await openPage(browser, t);
  watch(second.page);
  await second.page.goto(login.body.trim());
  await signInAtIdp(second.page, idp.user);
  await second.page.waitForURL((url) => url.href.startsWith(callback));
  const token = received?.searchParams.get('portcullis_jwt');
  assert.ok(token, 'the callback got a token');
  secrets.set('programmatic token', token);
  const api = await send(port, `app.localhost:${port}`, '/api', {
    headers: { authorization: `Portcullis ${token}`, accept: 'application/json' },
  });
  assert.equal(api.status, 200, api.body);

  // Envoy's last lines reach the log within its flush interval; wait for the API request's.
  await waitFor(
    async () => portcullis.logs.some((r) => r.msg === 'request' && JSON.stringify(r.obj).includes('/api')),
    {
      what: "the API request's access-log line",
      timeoutMs: 10_000,
    },
  );
  const kinds = [...secrets.keys()].join(', ');
  for (const kind of ['gRPC credential', 'session handle', 'programmatic token', 'sign-out token']) {
    assert.ok(secrets.has(kind), `${kind} was collected (have: ${kinds})`);
  }
  for (const prefix of ['code in', 'state in', 'portcullis_handoff in', 'cookie ']) {
    assert.ok(
      [...secrets.keys()].some((k) => k.startsWith(prefix)),
      `a ${prefix} secret was collected (${kinds})`,
    );
  }
  assert.ok(
    portcullis.logs.some((r) => r.level === 'debug' && (r.obj as { envoy?: string }).envoy !== undefined),
    "Envoy's debug lines were forwarded (the test would prove nothing otherwise)",
  );
  const text = portcullis.logs.map((record) => JSON.stringify(record)).join('\n');
  for (const [kind, value] of secrets) {
    const at = text.indexOf(value);
    assert.equal(at, -1, `the ${kind} is in the log: …${text.slice(Math.max(0, at - 200), at + 40)}…`);
  }
});

test("at log_level debug without proxy_log_level, Envoy's secret-bearing loggers stay at info", async () => {
  portcullis.writeConfig({ ...config, proxy_log_level: undefined });
  const levels = async (): Promise<Map<string, string>> => {
    const answer = await fetch(`${portcullis.adminUrl}/logging`, { method: 'POST' });
    const text = await answer.text();
    return new Map([...text.matchAll(/^\s*([\w.-]+): (\w+)$/gm)].map((m) => [m[1] ?? '', m[2] ?? '']));
  };
  const applied = await waitFor(
    async () => {
      const now = await levels();
      return now.get('http') === 'info' && now.get('main') === 'debug' ? now : undefined;
    },
    { what: "Envoy's loggers to be debug with the secret-bearing ones at info", timeoutMs: 15_000 },
  );
  for (const name of SENSITIVE_ENVOY_COMPONENTS) {
    if (applied.has(name)) assert.equal(applied.get(name), 'info', name);
  }
  assert.equal(applied.get('upstream'), 'debug', 'other loggers follow log_level');
});
