/**
 * The fast path (docs/fast-path.md) as a client meets it: when Portcullis allows a signed-in
 * request on a replayable route, its answer sets the decision cookie, and Envoy decides later
 * requests that carry it by itself, without a Check. Suites get that cookie the way a browser
 * does (the Set-Cookie of a request with the session cookie) and prove that Envoy decides by
 * counting Checks in Envoy's ext_authz stats (`checksSoFar`, test/support/envoy-checks.ts).
 */
import { parseSetCookie } from 'cookie';
import { decisionCookieName, FAST_PATH_FILTER } from '../../src/contract/fast-path.js';
import { checksSoFar } from '../../test/support/envoy-checks.js';
import { getAnswer } from './http.js';

/** The bench configs keep the default session cookie name, so this is the decision cookie's name. */
export const DECISION_COOKIE = decisionCookieName('_portcullis');

/** Cookie values are opaque: kept byte for byte. */
const opaque = (value: string): string => value;

/** `name=value` of the decision cookie among an answer's Set-Cookie values, or undefined. */
export function decisionCookieIn(setCookies: readonly string[] | undefined): string | undefined {
  for (const line of setCookies ?? []) {
    const cookie = parseSetCookie(line, { decode: opaque });
    const expired = cookie.maxAge !== undefined && cookie.maxAge <= 0;
    if (cookie.name === DECISION_COOKIE && !expired && cookie.value !== undefined && cookie.value !== '')
      return `${cookie.name}=${cookie.value}`;
  }
  return undefined;
}

/** One Envoy's protected host: its listener port, its admin URL, the route's host. */
export interface FastPathTarget {
  readonly port: number;
  readonly adminUrl: string;
  readonly host: string;
}

/** Runs `run` and counts the Checks the Envoy at `adminUrl` sent to Portcullis meanwhile. */
export async function checksDuring<T>(
  adminUrl: string,
  run: () => Promise<T>,
): Promise<{ readonly result: T; readonly checks: number }> {
  const before = await checksSoFar(adminUrl);
  const result = await run();
  return { result, checks: (await checksSoFar(adminUrl)) - before };
}

/** A client's cookies once it holds a decision cookie Envoy honours. */
export interface FastPathCookie {
  /** The whole `Cookie` header: the session cookie(s), then the decision cookie. */
  readonly header: string;
  /** `name=value` of the decision cookie. */
  readonly decision: string;
  /** The Set-Cookie values of the answer that set it (for a cookie jar to store). */
  readonly setCookies: readonly string[];
}

/**
 * What a client that keeps cookies sends after one request with `sessionCookie`: that cookie plus
 * the decision cookie the answer set, once `probes` GETs carrying both were decided by Envoy
 * alone (no Check). Tries again every 250 ms until `timeoutMs` (default 5 s): Portcullis mints no
 * token within the revocation margin of a session's creation or change. Resolves undefined when
 * no answer set a decision cookie (a checkout without the fast path, or `decision_token_lifetime:
 * 0s`); rejects when answers set one but Envoy kept asking Portcullis.
 */
export async function fastPathCookie(
  target: FastPathTarget,
  sessionCookie: string,
  options: { readonly timeoutMs?: number; readonly probes?: number } = {},
): Promise<FastPathCookie | undefined> {
  const deadline = performance.now() + (options.timeoutMs ?? 5_000);
  let minted = 0;
  let lastChecks = 0;
  for (;;) {
    const answer = await getAnswer(target.port, target.host, { headers: { cookie: sessionCookie } });
    if (answer.status !== 200)
      throw new Error(`${target.host} answered ${answer.status} to the session cookie`);
    const setCookies = answer.headers['set-cookie'] ?? [];
    const decision = decisionCookieIn(setCookies);
    if (decision !== undefined) {
      minted += 1;
      const header = `${sessionCookie}; ${decision}`;
      const { result: statuses, checks } = await checksDuring(target.adminUrl, async () => {
        const seen: number[] = [];
        for (let probe = 0; probe < (options.probes ?? 3); probe++)
          seen.push((await getAnswer(target.port, target.host, { headers: { cookie: header } })).status);
        return seen;
      });
      if (statuses.some((status) => status !== 200))
        throw new Error(`${target.host} answered ${statuses.join(', ')} with the decision cookie`);
      if (checks === 0) return { header, decision, setCookies };
      lastChecks = checks;
    }
    if (performance.now() > deadline) {
      if (minted === 0) return undefined;
      throw new Error(
        `${target.host}: ${minted} answers set ${DECISION_COOKIE}, but Envoy still asked Portcullis (${lastChecks} Checks for the last probes)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Whether the Envoy at `adminUrl` has the fast path's filter: its ECDS resource (named
 * FAST_PATH_FILTER) has stats. An older checkout, or `decision_token_lifetime: 0s`, has none.
 */
export async function fastPathConfigured(adminUrl: string): Promise<boolean> {
  const filter = encodeURIComponent(
    `^extension_config_discovery\\.http_filter\\.${FAST_PATH_FILTER.replace(/\./g, '\\.')}\\.`,
  );
  const response = await fetch(`${adminUrl}/stats?format=json&filter=${filter}`, {
    signal: AbortSignal.timeout(5_000),
  });
  if (!response.ok) throw new Error(`Envoy admin answered ${response.status}`);
  const body = (await response.json()) as { stats?: readonly { name?: string }[] };
  return (body.stats ?? []).some((stat) => stat.name !== undefined);
}

/**
 * Waits until Envoy honours a fresh decision cookie of `sessionCookie` and still honours it
 * `stableMs` later (default 15 s), trying every 2 s until `timeoutMs` (default 5 minutes); resolves
 * with how long that took, or undefined at once when Envoy has no fast-path filter (see
 * `fastPathConfigured`). Portcullis revokes a session's tokens whenever the session is put, mints
 * none while they are revoked, and refuses every token
 * while more sessions were revoked within one token lifetime than its revocation set holds (then
 * until they age out, about the token lifetime): right after a suite fills a store with many
 * sessions at once, the fast path is off for a while. The suites measure the state after that,
 * as for a population that signed in earlier, and report the wait.
 */
export async function waitForFastPath(
  target: FastPathTarget,
  sessionCookie: string,
  options: { readonly timeoutMs?: number; readonly stableMs?: number } = {},
): Promise<number | undefined> {
  const began = performance.now();
  if (!(await fastPathConfigured(target.adminUrl))) return undefined;
  const deadline = began + (options.timeoutMs ?? 300_000);
  let lastError = '';
  for (;;) {
    try {
      const fast = await fastPathCookie(target, sessionCookie, { timeoutMs: 2_000 });
      if (fast === undefined) throw new Error(`no answer set ${DECISION_COOKIE}`);
      await new Promise((resolve) => setTimeout(resolve, options.stableMs ?? 15_000));
      const { result: status, checks } = await checksDuring(target.adminUrl, async () => {
        const answer = await getAnswer(target.port, target.host, { headers: { cookie: fast.header } });
        return answer.status;
      });
      if (status === 200 && checks === 0) return performance.now() - began;
      lastError = `a decision cookie honoured at first was refused later (${status}, ${checks} Checks)`;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (performance.now() > deadline)
      throw new Error(`the fast path did not hold within ${options.timeoutMs ?? 300_000} ms: ${lastError}`);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}
