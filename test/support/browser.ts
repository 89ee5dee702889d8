import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium; `.ci/run` installs it. playwright-core never downloads a browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Bound on every navigation and wait in a browser test, so a hang fails instead of stalling. */
export const BROWSER_TIMEOUT_MS = 15_000;

/** Options for `launchBrowser`. */
export interface BrowserOptions {
  /**
   * Host names to resolve to 127.0.0.1 (Chromium's `--host-resolver-rules`), for tests that need
   * names other than `*.localhost`, which Chromium already sends to loopback.
   */
  readonly mapToLoopback?: readonly string[];
}

/** Something that runs cleanups when a test or suite ends: a TestContext, or `{ after }` from node:test. */
export interface Cleanup {
  after(fn: () => unknown): void;
}

/**
 * Launches Debian's Chromium headless through playwright-core with the flags a container needs
 * (no sandbox, no GPU, no background networking: nothing leaves loopback), and closes it when the
 * test or suite ends (`cleanup.after`), pass or fail. A missing Chromium fails the test (it is
 * never skipped: CI installs it).
 */
export async function launchBrowser(cleanup: Cleanup, options: BrowserOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's chromium (.ci/run does)`);
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
  const mapped = options.mapToLoopback ?? [];
  if (mapped.length > 0)
    args.push(`--host-resolver-rules=${mapped.map((host) => `MAP ${host} 127.0.0.1`).join(', ')}`);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args, timeout: BROWSER_TIMEOUT_MS });
  cleanup.after(() => browser.close());
  return browser;
}

/**
 * A fresh, isolated browser context (its own cookie jar: one "user") with one page, every action
 * and navigation bounded by BROWSER_TIMEOUT_MS; closed when `cleanup` ends.
 */
export async function openPage(
  browser: Browser,
  cleanup: Cleanup,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  cleanup.after(() => context.close());
  context.setDefaultTimeout(BROWSER_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(BROWSER_TIMEOUT_MS);
  return { context, page: await context.newPage() };
}

/** Fills the test IdP's login form (oidc-provider's interaction page) as `user` and submits it. */
export async function signInAtIdp(page: Page, user: { username: string; password: string }): Promise<void> {
  await page.locator('input[name=login]').fill(user.username);
  await page.locator('input[name=password]').fill(user.password);
  await page.locator('button[type=submit]').click();
}

/** The value of the `name` cookie the browser holds for `origin`; fails the test when there is none. */
export async function browserCookie(context: BrowserContext, origin: string, name: string): Promise<string> {
  const cookie = (await context.cookies(origin)).find((c) => c.name === name);
  if (cookie === undefined) throw new Error(`the browser holds no ${name} cookie for ${origin}`);
  return cookie.value;
}
