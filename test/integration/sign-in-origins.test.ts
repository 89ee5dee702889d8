/**
 * Sign-in hands a session only to an origin Portcullis serves (issue 33 items 1 and 12), with
 * every real part: Debian's Chromium, Portcullis all-in-one and its real Envoy on a plain-HTTP
 * loopback listener, and a real OIDC provider (oidc-provider). A rogue HTTP listener on another
 * port of 127.0.0.1 stands for whoever listens on another port of a route host's name: a signed-in
 * browser sent to sign in with a redirect to it must be refused, and the rogue must receive no
 * request at all (the handoff is a bearer credential for the session). A programmatic sign-in link
 * works once: the second visit is refused with a page saying so.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, openPage, signInAtIdp } from '../support/browser.js';
import { sendToListener as send } from '../support/listener-request.js';
import { startSignInRig } from '../support/sign-in-envoy.js';
import type { TestIdp } from '../support/test-idp.js';

describe('sign-in hands sessions only to origins Portcullis serves', () => {
  let idp: TestIdp;
  let browser: Browser;
  let port: number;
  let appOrigin: string;
  let authenticateOrigin: string;
  /** Every request the rogue listener received (method and URL). */
  const rogueSaw: string[] = [];
  let roguePort: number;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    const rogue = createServer((req: IncomingMessage, res) => {
      rogueSaw.push(`${req.method ?? ''} ${req.url ?? ''}`);
      res.end('rogue');
    });
    await new Promise<void>((resolve) => rogue.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => rogue.close(resolve)));
    roguePort = (rogue.address() as AddressInfo).port;
    const rig = await startSignInRig();
    cleanups.push(() => rig.stop());
    ({ idp, port, appOrigin, authenticateOrigin } = rig);
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  const signInUrl = (redirect: string): string =>
    `${authenticateOrigin}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(redirect)}`;

  test('a signed-in browser sent to sign in for another port or scheme of the route host is refused; the rogue port receives nothing', async (t) => {
    const { page } = await openPage(browser, t);
    await page.goto(`${appOrigin}/start`);
    await signInAtIdp(page, idp.user);
    await page.waitForURL(`${appOrigin}/start`);

    // The browser now holds a session on the authenticate host: the unfixed sign-in would have
    // sent the handoff straight to these origins (single sign-on), without the IdP.
    const strays = [
      `http://app.localhost:${roguePort}/`,
      `https://app.localhost:${roguePort}/`,
      `http://APP.localhost:${roguePort}/.portcullis/callback`,
      `https://app.localhost:${port}/`,
    ];
    for (const stray of strays) {
      const answer = await page.goto(signInUrl(stray));
      assert.equal(answer?.status(), 400, `${stray}: ${answer?.status()} at ${page.url()}`);
      assert.equal(new URL(page.url()).origin, authenticateOrigin, `${stray} led to ${page.url()}`);
      assert.match(await page.locator('body').innerText(), /is not where Portcullis serves app\.localhost/);
    }
    assert.deepEqual(rogueSaw, [], 'the rogue listener received a request');

    // The served origin still works: single sign-on straight back to the app.
    await page.goto(signInUrl(`${appOrigin}/again`));
    await page.waitForURL(`${appOrigin}/again`);
    assert.deepEqual(rogueSaw, []);
  });

  test('a programmatic sign-in link works once; the second visit is refused with a page saying so', async (t) => {
    let received: URL | undefined;
    const listener = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname === '/cb') received = url;
      res.end('signed in');
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => listener.close(resolve)));
    const callback = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/cb`;
    // The Host names no port (as a client behind `--via` sends it): the handoff still lands on the
    // port Portcullis serves, taken from its configuration.
    const login = await send(
      port,
      'app.localhost',
      `/.portcullis/api/v1/login?portcullis_redirect_uri=${encodeURIComponent(callback)}`,
    );
    assert.equal(login.status, 200, login.body);
    const link = login.body.trim();

    const { page } = await openPage(browser, t);
    const handoffs: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/.portcullis/callback') handoffs.push(request.url());
    });
    await page.goto(link);
    await signInAtIdp(page, idp.user);
    await page.waitForURL((url) => url.href.startsWith(callback));
    assert.ok(received?.searchParams.get('portcullis_jwt'), `no token reached ${callback}`);
    assert.deepEqual(
      handoffs.map((url) => new URL(url).origin),
      [appOrigin],
      'the handoff went to the served origin',
    );

    received = undefined;
    const again = await page.goto(link);
    assert.equal(again?.status(), 400);
    assert.match(await page.locator('body').innerText(), /already used/);
    assert.equal(received, undefined, 'the second use reached the client');
    assert.deepEqual(rogueSaw, []);
  });
});
