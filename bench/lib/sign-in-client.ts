/**
 * A browserless sign-in for the benchmark: follows a proxy's redirects with a cookie jar, like a
 * browser would, and hands the identity provider's login to `login` (test/support/idp-login.ts's
 * `completeLogin`, which answers the redirect back to the proxy's callback). Route and
 * authenticate hosts (`*.bench.test`) reach Envoy's loopback listener with their Host header, as
 * a browser's resolver would send them there.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { parseSetCookie, stringifyCookie } from 'cookie';

/** One cookie as the jar keeps it (RFC 6265 section 5.3, the parts this benchmark meets). */
interface StoredCookie {
  readonly name: string;
  readonly value: string;
  /** The host it was set by (host-only) or its Domain attribute. */
  readonly domain: string;
  readonly hostOnly: boolean;
  readonly path: string;
  /** ms since the epoch; undefined for a session cookie. */
  readonly expiresAt: number | undefined;
}

/** Cookie values are opaque to a browser: stored and sent back byte for byte, never URL-decoded. */
const opaque = (value: string): string => value;

/** RFC 6265 5.1.4 default-path: the request path up to its last `/`, or `/`. */
function defaultPath(path: string): string {
  const last = path.lastIndexOf('/');
  return last <= 0 ? '/' : path.slice(0, last);
}

/** RFC 6265 5.1.4 path-match. */
function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/**
 * The cookies of one simulated browser: stores `Set-Cookie` answers (parsed by the `cookie`
 * package) and builds the `Cookie` header for a request, by host (ports ignored, as browsers
 * do), path and expiry. Not a general jar: no public-suffix checks, no Secure/SameSite rules
 * (the benchmark runs plain http on loopback).
 */
export class CookieJar {
  private readonly cookies = new Map<string, StoredCookie>();

  /** Stores the `Set-Cookie` headers of an answer to `url`; expired ones delete theirs. */
  store(url: URL, setCookies: readonly string[], now = Date.now()): void {
    for (const line of setCookies) {
      const parsed = parseSetCookie(line, { decode: opaque });
      const domain = parsed.domain?.replace(/^\./, '').toLowerCase();
      const cookie: StoredCookie = {
        name: parsed.name,
        value: parsed.value ?? '',
        domain: domain ?? url.hostname,
        hostOnly: domain === undefined,
        path: parsed.path?.startsWith('/') === true ? parsed.path : defaultPath(url.pathname),
        expiresAt: parsed.maxAge !== undefined ? now + parsed.maxAge * 1000 : parsed.expires?.getTime(),
      };
      const key = `${cookie.domain}\t${cookie.path}\t${cookie.name}`;
      if (cookie.expiresAt !== undefined && cookie.expiresAt <= now) this.cookies.delete(key);
      else this.cookies.set(key, cookie);
    }
  }

  /** The `Cookie` header a browser sends with a request to `url`, or undefined without cookies. */
  header(url: URL, now = Date.now()): string | undefined {
    const host = url.hostname.toLowerCase();
    const matching = [...this.cookies.values()].filter(
      (cookie) =>
        (cookie.hostOnly
          ? host === cookie.domain
          : host === cookie.domain || host.endsWith(`.${cookie.domain}`)) &&
        pathMatches(cookie.path, url.pathname) &&
        (cookie.expiresAt === undefined || cookie.expiresAt > now),
    );
    if (matching.length === 0) return undefined;
    // Longer paths first (RFC 6265 5.4 step 2).
    matching.sort((a, b) => b.path.length - a.path.length);
    return stringifyCookie(Object.fromEntries(matching.map((cookie) => [cookie.name, cookie.value])), {
      encode: opaque,
    });
  }
}

/** One answer on the way through a sign-in. */
export interface SignInStep {
  readonly url: string;
  /** The status; 0 for the IdP's login, which `login` drives. */
  readonly status: number;
  /** Client-side time of this request (ms). */
  readonly ms: number;
  readonly headers: IncomingHttpHeaders;
}

/** Where a sign-in ended. */
export interface SignInOutcome {
  /** The URL of the last answer, which was not a redirect. */
  readonly url: URL;
  readonly status: number;
  readonly steps: readonly SignInStep[];
}

/** How to reach things during a sign-in. */
export interface SignInOptions {
  readonly jar: CookieJar;
  /** True for URLs of the identity provider (handed to `login`). */
  isIdp(url: URL): boolean;
  /** Drives the IdP's login from its authorization URL; resolves with the redirect to the callback. */
  login(authorizationUrl: string): Promise<string>;
  /** The loopback address and port that serve `url` (e.g. Envoy's listener for `*.bench.test`). */
  connect(url: URL): { readonly host: string; readonly port: number };
  readonly timeoutMs?: number;
  readonly maxHops?: number;
}

/** One GET of `url` (a fresh connection) with the jar's cookies; stores what it sets. */
function get(url: URL, options: SignInOptions): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const target = options.connect(url);
  const cookie = options.jar.header(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.host,
        port: target.port,
        path: `${url.pathname}${url.search}`,
        headers: { host: url.host, accept: 'text/html', ...(cookie === undefined ? {} : { cookie }) },
        agent: false,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        options.jar.store(url, res.headers['set-cookie'] ?? []);
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Opens `start` like a browser that follows every redirect, signing in at the IdP on the way;
 * resolves with the first answer that is not a redirect (the caller checks it is the page it
 * wanted). Rejects on a network error or after `maxHops` (default 12) redirects.
 */
export async function signIn(start: URL, options: SignInOptions): Promise<SignInOutcome> {
  const steps: SignInStep[] = [];
  let url = start;
  for (let hop = 0; hop < (options.maxHops ?? 12); hop++) {
    const began = performance.now();
    if (options.isIdp(url)) {
      const back = await options.login(url.href);
      steps.push({ url: url.href, status: 0, ms: performance.now() - began, headers: {} });
      url = new URL(back);
      continue;
    }
    const { status, headers } = await get(url, options);
    steps.push({ url: url.href, status, ms: performance.now() - began, headers });
    if (status < 300 || status > 399 || headers.location === undefined) return { url, status, steps };
    url = new URL(headers.location, url);
  }
  throw new Error(
    `more than ${options.maxHops ?? 12} redirects from ${start.href}: ${steps.map((step) => `${step.status} ${step.url}`).join(' -> ')}`,
  );
}
