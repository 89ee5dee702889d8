/**
 * Issue 33 items 6 and 7 with every real part: Debian's Chromium (playwright-core) signs in at a
 * real OIDC provider (oidc-provider, test/support/test-idp.ts) through Portcullis all-in-one and
 * its real Envoy. The route admits `allowed_domains: [example.com]` and the user id `eve`, and
 * denies `eve@example.com`.
 * Mallory's address is at example.com but the IdP says `email_verified: false`: it counts as no
 * address, so she is refused by the allow rule. Eve (id `eve`, address `Eve@Example.com`) passes
 * the allow rule by her id, and the deny catches her address in any case.
 * Alice (verified, not denied) gets through, so the refusals are the policy's and not the set-up's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser, openPage, signInAtIdp, type Cleanup } from '../support/browser.js';
import { startSignInRig, type SignInRig } from '../support/sign-in-envoy.js';

const MALLORY = {
  username: 'mallory',
  password: 'mallory-password',
  email: 'mallory@example.com',
  claims: { email_verified: false },
};
const EVE = { username: 'eve', password: 'eve-password', email: 'Eve@Example.com' };

describe('e-mail policies in a real browser through Envoy', () => {
  let rig: SignInRig;
  let browser: Browser;
  let appOrigin: string;
  const cleanups: (() => unknown)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  before(async () => {
    rig = await startSignInRig({
      idp: { accounts: [MALLORY, EVE] },
      appRoute: {
        allowed_domains: ['example.com'],
        allowed_users: ['eve'],
        policy: [{ deny: { or: [{ email: 'eve@example.com' }] } }],
      },
    });
    cleanups.push(() => rig.stop());
    appOrigin = rig.appOrigin;
    browser = await launchBrowser({ after: (fn) => cleanups.push(fn) });
  });

  /** Signs `user` in from a fresh browser at the app and returns the status the app then answers. */
  async function statusAfterSignIn(
    cleanup: Cleanup,
    user: { username: string; password: string },
  ): Promise<{ status: number; body: string }> {
    const { page } = await openPage(browser, cleanup);
    const target = `${appOrigin}/page`;
    await page.goto(target);
    assert.equal(new URL(page.url()).origin, rig.idp.issuer, `the app led to ${page.url()}, not the IdP`);
    const landed = page.waitForResponse((response) => response.url() === target);
    await signInAtIdp(page, user);
    const response = await landed;
    return { status: response.status(), body: await response.text() };
  }

  test('a verified address in the allowed domain gets through (the control)', async (t) => {
    const { status } = await statusAfterSignIn(t, rig.idp.user);
    assert.equal(status, 200);
  });

  test('an address the IdP marks email_verified: false does not satisfy allowed_domains', async (t) => {
    const { status, body } = await statusAfterSignIn(t, MALLORY);
    assert.equal(status, 403, body);
    assert.match(body, /not allowed to access/);
  });

  test('Eve@Example.com is denied by a deny on eve@example.com', async (t) => {
    const { status, body } = await statusAfterSignIn(t, EVE);
    assert.equal(status, 403, body);
    assert.match(body, /denied by policy/);
  });
});
