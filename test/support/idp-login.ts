import { parseSetCookie, stringifyCookie } from 'cookie';

/**
 * A minimal cookie jar for driving the test IdP (and Portcullis) with fetch: cookies are kept per
 * host (Domain and Path are not modelled: every cookie a host set goes back to that host), and a
 * cookie set with Max-Age <= 0 or a past Expires is dropped.
 */
export class CookieJar {
  readonly #byHost = new Map<string, Map<string, string>>();

  /** Records the Set-Cookie headers of `response`, which answered a request to `url`. */
  store(url: URL, response: Response): void {
    const cookies = this.#byHost.get(url.host) ?? new Map<string, string>();
    for (const header of response.headers.getSetCookie()) {
      const cookie = parseSetCookie(header);
      const expired =
        (cookie.maxAge !== undefined && cookie.maxAge <= 0) ||
        (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now());
      if (expired) cookies.delete(cookie.name);
      else cookies.set(cookie.name, cookie.value ?? '');
    }
    this.#byHost.set(url.host, cookies);
  }

  /** The Cookie header for a request to `url`, or undefined when the jar has none for its host. */
  header(url: URL): string | undefined {
    const cookies = this.#byHost.get(url.host);
    if (cookies === undefined || cookies.size === 0) return undefined;
    return stringifyCookie(Object.fromEntries(cookies));
  }

  /** One cookie's value for `host`. */
  get(host: string, name: string): string | undefined {
    return this.#byHost.get(host)?.get(name);
  }
}

export interface LoginOptions {
  /** Cookies to send and keep (pass one to reuse the IdP session later, e.g. for logout). */
  readonly jar?: CookieJar;
  /** Stop at the first redirect whose target starts with this; default: the first leaving the IdP's origin. */
  readonly redirectUri?: string;
  /** At most this many requests. Default 12. */
  readonly maxSteps?: number;
}

interface Form {
  readonly action: URL;
  readonly fields: URLSearchParams;
  readonly hasPassword: boolean;
}

/** Finds the first form of one of the test IdP's own pages (regexes are fine only for our pages). */
function findForm(html: string, base: URL): Form | undefined {
  const form = /<form\b[^>]*>/i.exec(html)?.[0];
  if (form === undefined) return undefined;
  const action = /\baction="([^"]*)"/i.exec(form)?.[1] ?? base.href;
  const fields = new URLSearchParams();
  for (const [input] of html.matchAll(/<input\b[^>]*type="hidden"[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(input)?.[1];
    const value = /\bvalue="([^"]*)"/i.exec(input)?.[1] ?? '';
    if (name !== undefined) fields.append(name, value);
  }
  return { action: new URL(action, base), fields, hasPassword: /type="password"/i.test(html) };
}

async function step(url: URL, jar: CookieJar, body?: URLSearchParams): Promise<Response> {
  const headers = new Headers();
  const cookie = jar.header(url);
  if (cookie !== undefined) headers.set('cookie', cookie);
  const init: RequestInit = { redirect: 'manual', headers, method: body === undefined ? 'GET' : 'POST' };
  if (body !== undefined) init.body = body;
  const response = await fetch(url, init);
  jar.store(url, response);
  return response;
}

/** The form_post response mode's auto-submitting form, as the URL with the posted fields as query. */
function formPostResult(html: string, base: URL): URL | undefined {
  const form = findForm(html, base);
  if (form === undefined || form.action.origin === base.origin) return undefined;
  const url = new URL(form.action);
  for (const [name, value] of form.fields) url.searchParams.append(name, value);
  return url;
}

/**
 * Signs `user` in at the test IdP without a browser: starting from `authorizationUrl` it follows
 * redirects and submits the login form (and any consent form) with fetch and a cookie jar, and
 * returns the URL of the final redirect to the client (not followed): `redirect_uri?code=&state=`
 * or, for response_mode=form_post, the client's URL with the posted fields as its query. Throws
 * when the IdP rejects the credentials or the flow does not reach the client.
 */
export async function completeLogin(
  authorizationUrl: URL | string,
  user: string,
  password: string,
  options: LoginOptions = {},
): Promise<URL> {
  const jar = options.jar ?? new CookieJar();
  const idpOrigin = new URL(authorizationUrl).origin;
  const leaves = (target: URL): boolean =>
    options.redirectUri === undefined
      ? target.origin !== idpOrigin
      : target.href.startsWith(options.redirectUri);
  let url = new URL(authorizationUrl);
  let body: URLSearchParams | undefined;
  let submittedLogin = false;
  for (let n = 0; n < (options.maxSteps ?? 12); n += 1) {
    const response = await step(url, jar, body);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      const target = new URL(location, url);
      if (leaves(target)) return target;
      [url, body] = [target, undefined];
      continue;
    }
    const html = await response.text();
    if (response.status !== 200)
      throw new Error(`IdP answered ${response.status} at ${url.href}: ${html.slice(0, 300)}`);
    const posted = formPostResult(html, url);
    if (posted !== undefined) return posted;
    const form = findForm(html, url);
    if (form === undefined) throw new Error(`no form and no redirect at ${url.href}: ${html.slice(0, 300)}`);
    if (form.hasPassword) {
      if (submittedLogin) throw new Error(`the IdP refused the login of ${user}`);
      submittedLogin = true;
      form.fields.set('login', user);
      form.fields.set('password', password);
    }
    [url, body] = [form.action, form.fields];
  }
  throw new Error(`login did not reach the client within ${options.maxSteps ?? 12} requests`);
}

/**
 * Completes RP-initiated logout at the test IdP: opens `endSessionUrl` (with the jar that holds
 * the IdP session, if any), confirms the logout form, and returns where the IdP redirects
 * (`post_logout_redirect_uri`), or undefined when it shows its own signed-out page instead.
 */
export async function completeLogout(
  endSessionUrl: URL | string,
  jar: CookieJar = new CookieJar(),
): Promise<URL | undefined> {
  const url = new URL(endSessionUrl);
  const page = await step(url, jar);
  const form = findForm(await page.text(), url);
  if (form === undefined) throw new Error(`no logout form at ${url.href} (status ${page.status})`);
  form.fields.set('logout', 'yes');
  const response = await step(form.action, jar, form.fields);
  await response.body?.cancel();
  const location = response.headers.get('location');
  if (location === null) return undefined;
  const target = new URL(location, form.action);
  return target.origin === url.origin ? undefined : target;
}
