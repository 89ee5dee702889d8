import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCookie, stringifyCookie } from 'cookie';
import { startTestIdp, type TestIdp } from '../../test/support/test-idp.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
import { checksDuring, DECISION_COOKIE, fastPathCookie } from '../lib/fast-path.js';
import { startUpstream, statusOf, type Upstream } from '../lib/http.js';
import {
  ensureOauth2Proxy,
  oauth2ProxyPort,
  oauth2ProxyRedirectUri,
  OAUTH2_PROXY_VERSION,
  startOauth2Proxy,
  type Oauth2ProxyClient,
} from '../lib/oauth2-proxy.js';
import { startCli } from '../lib/portcullis-process.js';
import type { SuiteResult } from '../lib/report.js';
import { CookieJar } from '../lib/sign-in-client.js';
import {
  browser,
  CALLBACK_PATH,
  medianOrNaN,
  ownTimeDetail,
  signInBatch,
  signInTo,
  type Batch,
} from '../lib/sign-in-runs.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { summarize } from '../lib/stats.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/wrk.js';

const PUBLIC_HOST = 'public.bench.test';
const AUTHZ_HOST = 'authz.bench.test';
const AUTHENTICATE_HOST = 'authenticate.bench.test';
const PORTCULLIS_CLIENT = { id: 'portcullis-bench', secret: 'portcullis-bench-secret' };
const OAUTH2_PROXY_CLIENT = { id: 'oauth2-proxy-bench', secret: 'oauth2-proxy-bench-secret' };
/** Same load as the authz suite. */
const CONNECTIONS = 16;
const RATIO_BUDGET = 1.5;
const CONCURRENT_SIGN_INS = 200;
/** The signed identity assertion `pass_identity_headers` adds. */
const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';

/** Portcullis's config: a public and a protected route to one upstream, sign-in at the local IdP. */
function signInConfig(ports: Ports, upstream: Upstream, idp: TestIdp): string {
  const to = `http://127.0.0.1:${upstream.port}`;
  const routes = [
    `  - from: https://${PUBLIC_HOST}\n    to: ${to}\n    allow_public_unauthenticated_access: true\n`,
    `  - from: https://${AUTHZ_HOST}\n    to: ${to}\n    allow_any_authenticated_user: true\n    pass_identity_headers: true\n`,
  ];
  const signInSettings = [
    `shared_secret: ${Buffer.alloc(32, 9).toString('base64')}`,
    `cookie_secret: ${Buffer.alloc(32, 8).toString('base64')}`,
    `authenticate_service_url: http://${AUTHENTICATE_HOST}:${ports.proxyPort}`,
    `idp_provider_url: ${idp.issuer}`,
    `idp_client_id: ${PORTCULLIS_CLIENT.id}`,
    `idp_client_secret: ${PORTCULLIS_CLIENT.secret}`,
    '',
  ].join('\n');
  // `info`: the sign-in line with its timings; Portcullis logs no line per proxied request.
  return configYaml(ports, routes, signInSettings).replace('log_level: warn', 'log_level: info');
}

/** One repetition of the throughput comparison. */
interface Repetition {
  readonly public: WrkResult;
  /** Portcullis's protected route with the sign-in's cookie jar (session and decision cookies): the fast path. */
  readonly portcullis: WrkResult;
  /** The same route with the jar's cookies but the decision cookie: the slow path, a Check per request. */
  readonly portcullisSlow: WrkResult;
  readonly oauth2Proxy: WrkResult;
  /** Checks Envoy sent during the fast-path load. */
  readonly fastChecks: number;
}

/** The loads of one repetition. */
type LoadName = Exclude<keyof Repetition, 'fastChecks'>;
type Loads = Readonly<Record<LoadName, () => Promise<WrkResult>>>;

/**
 * The throughput comparison: `reps` rounds of the four loads, order rotated every round;
 * `prepare` makes each round's loads (the decision cookie lives two minutes, so it is fetched
 * again), and the Checks Envoy (admin at `adminUrl`) sends during the fast-path load are counted.
 */
async function compareThroughput(
  context: Context,
  prepare: () => Promise<Loads>,
  adminUrl: string,
  reps: number,
): Promise<Repetition[]> {
  const names: LoadName[] = ['public', 'portcullis', 'portcullisSlow', 'oauth2Proxy'];
  const repetitions: Repetition[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const loads = await prepare();
    // Rotated order, so drifting load on a shared machine hits all four alike.
    const shift = rep % names.length;
    const order = [...names.slice(shift), ...names.slice(0, shift)];
    const results: Partial<Record<LoadName, WrkResult>> = {};
    let fastChecks = 0;
    for (const name of order) {
      const { result, checks } = await checksDuring(adminUrl, loads[name]);
      results[name] = result;
      if (name === 'portcullis') fastChecks = checks;
    }
    const repetition = { ...(results as Record<LoadName, WrkResult>), fastChecks };
    repetitions.push(repetition);
    const rps = (name: LoadName): number => Math.round(repetition[name].requestsPerSecond);
    context.progress(
      `sign-in throughput ${rep + 1}/${reps}: public ${rps('public')}, Portcullis fast path ${rps('portcullis')} (${fastChecks} Checks), slow path ${rps('portcullisSlow')}, oauth2-proxy ${rps('oauth2Proxy')} req/s`,
    );
  }
  return repetitions;
}

/** A `Cookie` header without the cookie `name`. */
function withoutCookie(header: string, name: string): string {
  const opaque = (value: string): string => value;
  const cookies = parseCookie(header, { decode: opaque });
  delete cookies[name];
  return stringifyCookie(cookies as Record<string, string>, { encode: opaque });
}

/**
 * Sign-in, measured against oauth2-proxy (issue 24 "Speed"). One local IdP (test/support's
 * oidc-provider on loopback), one upstream; Portcullis through its command with Envoy, oauth2-proxy
 * v7.15.6 built with `go install` (cookie sessions, PKCE, same IdP and upstream). Each side gets a
 * session by a real, browserless sign-in through its own flow (`completeLogin` at the IdP); then
 * the public route, Portcullis's protected route with the sign-in's cookie jar (session and
 * decision cookies: the fast path, the decision cookie fetched again each round), the same route
 * without the decision cookie (the slow path) and oauth2-proxy take the authz suite's wrk load in
 * rotated order, and rounds of 200 concurrent sign-ins go through Portcullis, each of which must
 * land on its original URL with a 200. Portcullis's own time per sign-in comes from its callback
 * log line (`ownMs`: the callback's handling without the IdP calls).
 */
export async function signInSuite(context: Context): Promise<SuiteResult> {
  requireWrk();
  const binary = await ensureOauth2Proxy(context);
  const reps = context.quick ? 2 : 8;
  const seconds = context.quick ? 1 : 2;
  const bursts = context.quick ? 1 : 3;
  const upstream = await startUpstream();
  const ports = await loopbackPorts();
  const proxyPort = await oauth2ProxyPort();
  const idp = await startTestIdp({
    clients: [
      {
        clientId: PORTCULLIS_CLIENT.id,
        clientSecret: PORTCULLIS_CLIENT.secret,
        redirectUris: [`http://${AUTHENTICATE_HOST}:${ports.proxyPort}${CALLBACK_PATH}`],
      },
      {
        clientId: OAUTH2_PROXY_CLIENT.id,
        clientSecret: OAUTH2_PROXY_CLIENT.secret,
        redirectUris: [oauth2ProxyRedirectUri(proxyPort)],
      },
    ],
  });
  const stops: (() => Promise<void>)[] = [() => upstream.stop(), () => idp.close()];
  try {
    const configPath = join(context.workDir, 'sign-in.yaml');
    writeFileSync(configPath, signInConfig(ports, upstream, idp));
    const portcullis = startCli(context, configPath, 'sign-in', 900_000);
    stops.unshift(() => portcullis.stop());
    await waitServing(portcullis, ports, {
      clusters: 1,
      hosts: [PUBLIC_HOST],
      intervalMs: 100,
      timeoutMs: 60_000,
    });
    const client: Oauth2ProxyClient = {
      issuer: idp.issuer,
      clientId: OAUTH2_PROXY_CLIENT.id,
      clientSecret: OAUTH2_PROXY_CLIENT.secret,
    };
    const upstreamUrl = `http://127.0.0.1:${upstream.port}/`;
    const peer = await startOauth2Proxy(context, {
      binary,
      port: proxyPort,
      upstreamUrl,
      client,
      timeoutMs: 900_000,
    });
    stops.unshift(() => peer.stop());

    // A session each, made by a real sign-in.
    const portcullisJar = new CookieJar();
    const protectedUrl = new URL(`http://${AUTHZ_HOST}:${ports.proxyPort}/`);
    await signInTo(protectedUrl, browser(ports, idp, portcullisJar));
    if (upstream.lastHeaders()[ASSERTION_HEADER] === undefined)
      throw new Error(
        `the upstream got no ${ASSERTION_HEADER} after sign-in: pass_identity_headers had no effect`,
      );
    const peerJar = new CookieJar();
    await signInTo(new URL(`${peer.origin}/`), {
      ...browser(ports, idp, peerJar),
      connect: () => ({ host: '127.0.0.1', port: proxyPort }),
    });
    const signedIn = portcullisJar.header(protectedUrl);
    const peerCookie = peerJar.header(new URL(`${peer.origin}/`));
    if (signedIn === undefined || peerCookie === undefined) throw new Error('a sign-in set no cookie');
    // The slow path: the jar's cookies without a decision cookie (none is minted within the
    // revocation margin of the sign-in, so the jar may not hold one yet).
    const sessionOnly = withoutCookie(signedIn, DECISION_COOKIE);
    const target = { port: ports.proxyPort, adminUrl: ports.adminUrl, host: AUTHZ_HOST };
    /** The jar's cookies once it holds a decision cookie Envoy honours (from a fresh answer). */
    const fastCookies = async (): Promise<string> => {
      const fast = await fastPathCookie(target, sessionOnly);
      if (fast === undefined)
        throw new Error(`no answer set ${DECISION_COOKIE}: this checkout has no fast path`);
      portcullisJar.store(protectedUrl, fast.setCookies);
      const header = portcullisJar.header(protectedUrl) ?? '';
      if (!header.includes(`${DECISION_COOKIE}=`)) throw new Error(`the jar kept no ${DECISION_COOKIE}`);
      return header;
    };

    // wrk counts only 4xx and 5xx as errors: a redirect to sign in would pass as throughput.
    const statuses = [
      await statusOf(ports.proxyPort, PUBLIC_HOST),
      await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: sessionOnly } }),
      await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: await fastCookies() } }),
      await statusOf(proxyPort, `127.0.0.1:${proxyPort}`, { headers: { cookie: peerCookie } }),
    ];
    if (statuses.some((status) => status !== 200))
      throw new Error(
        `public, Portcullis (slow, fast) and oauth2-proxy answered ${statuses.join(', ')} (not all 200)`,
      );
    const proxyUrl = `http://127.0.0.1:${ports.proxyPort}/`;
    const load =
      (url: string, headers: Record<string, string>, time = seconds) =>
      () =>
        runWrk({ url, headers, connections: CONNECTIONS, seconds: time });
    const prepare = async (): Promise<Loads> => ({
      public: load(proxyUrl, { Host: PUBLIC_HOST }),
      portcullis: load(proxyUrl, { Host: AUTHZ_HOST, Cookie: await fastCookies() }),
      portcullisSlow: load(proxyUrl, { Host: AUTHZ_HOST, Cookie: sessionOnly }),
      oauth2Proxy: load(`${peer.origin}/`, { Cookie: peerCookie }),
    });
    // Warm-up: JIT, connection pools, caches.
    await compareThroughput(context, prepare, ports.adminUrl, 1);
    const repetitions = await compareThroughput(context, prepare, ports.adminUrl, reps);

    // Sign-ins one at a time (Portcullis's own time without queueing), then bursts of 200 at once.
    const sequential = await signInBatch(ports, idp, portcullis, {
      host: AUTHZ_HOST,
      label: 'one-at-a-time',
      count: context.quick ? 5 : 20,
      concurrency: 1,
    });
    context.progress(
      `sign-ins one at a time: ${sequential.errors.length} errors, Portcullis's own time median ${medianOrNaN(sequential.ownMs)} ms`,
    );
    const burstResults: Batch[] = [];
    for (let index = 0; index < bursts; index++) {
      const label = `burst-${index}`;
      const options = {
        host: AUTHZ_HOST,
        label,
        count: CONCURRENT_SIGN_INS,
        concurrency: CONCURRENT_SIGN_INS,
      };
      const result = await signInBatch(ports, idp, portcullis, options);
      burstResults.push(result);
      context.progress(
        `sign-in burst ${index + 1}/${bursts}: ${CONCURRENT_SIGN_INS} in ${Math.round(result.wallMs)} ms, ${result.errors.length} errors, Portcullis's own time median ${medianOrNaN(result.ownMs)} ms (${result.ownMs.length} log lines)`,
      );
    }
    return signInResult(repetitions, sequential, burstResults, { reps, seconds });
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

/** The suite's measurements from its runs. */
function signInResult(
  repetitions: readonly Repetition[],
  sequential: Batch,
  bursts: readonly Batch[],
  settings: { readonly reps: number; readonly seconds: number },
): SuiteResult {
  const of = (pick: (r: Repetition) => number) => summarize(repetitions.map(pick));
  const versusPeer = of((r) => r.portcullis.requestsPerSecond / r.oauth2Proxy.requestsPerSecond);
  const slowVersusPeer = of((r) => r.portcullisSlow.requestsPerSecond / r.oauth2Proxy.requestsPerSecond);
  const ofPublic = (name: LoadName) => of((r) => r[name].requestsPerSecond / r.public.requestsPerSecond);
  const fastPublic = ofPublic('portcullis');
  const peerPublic = ofPublic('oauth2Proxy');
  const slowPublic = ofPublic('portcullisSlow');
  const rps = (name: LoadName) => Math.round(of((r) => r[name].requestsPerSecond).median);
  const fastRequests = repetitions.reduce((sum, r) => sum + r.portcullis.requests, 0);
  const fastChecks = repetitions.reduce((sum, r) => sum + r.fastChecks, 0);
  const decided = fastChecks <= fastRequests * 0.01;
  const checkNote = `Checks during the fast-path loads: ${fastChecks} of ${fastRequests.toLocaleString('en-US')} requests${decided ? '' : ' (too many: not the fast path)'}`;
  const errors = bursts.flatMap((b) => b.errors);
  const signInMs = bursts.flatMap((b) => b.signInMs);
  const callbackMs = bursts.flatMap((b) => b.callbackMs).filter((ms) => !Number.isNaN(ms));
  const attempts = bursts.length * CONCURRENT_SIGN_INS;
  const ownOne = medianOrNaN(sequential.ownMs);
  const ownBurst = medianOrNaN(bursts.flatMap((b) => b.ownMs));
  return {
    name: 'sign-in',
    how: `One local IdP (oidc-provider), one upstream. Portcullis (command, Envoy) vs oauth2-proxy ${OAUTH2_PROXY_VERSION} (go install; cookie sessions, PKCE S256, request logging off), each with a session made by a real browserless sign-in; wrk on loopback, ${settings.reps} repetitions of public route / Portcullis protected route with the sign-in's cookie jar (session and ${DECISION_COOKIE} cookies, fetched again each repetition: the fast path, its Checks counted from Envoy's stats) / the same without the decision cookie (slow path) / oauth2-proxy at ${CONNECTIONS} connections, ${settings.seconds} s each, rotated order; medians of per-repetition ratios. Then sign-ins through Portcullis (each a fresh cookie jar, to its own URL, ending 200 on it): ${sequential.signInMs.length + sequential.errors.length} one at a time, then ${bursts.length} rounds of ${CONCURRENT_SIGN_INS} at once. Portcullis's own time per sign-in is its callback log line's ownMs (the callback's handling without its IdP calls, idpMs).`,
    measurements: [
      {
        what: 'signed-in requests per second, Portcullis / oauth2-proxy',
        budget: `>= ${RATIO_BUDGET}`,
        value: versusPeer.median,
        unit: 'x',
        pass: decided && versusPeer.median >= RATIO_BUDGET,
        detail: `${CONNECTIONS} connections: Portcullis (fast path: the sign-in's cookie jar with its ${DECISION_COOKIE}) ${rps('portcullis')} req/s, oauth2-proxy ${rps('oauth2Proxy')} req/s; per repetition ${versusPeer.runs.join(', ')}; the slow path (no decision cookie) ${rps('portcullisSlow')} req/s, ${slowVersusPeer.median} of oauth2-proxy (per repetition ${slowVersusPeer.runs.join(', ')}); ${checkNote}`,
      },
      {
        what: 'signed-in / public requests per second, Portcullis fast path (real sign-in, decision cookie)',
        budget: 'report',
        value: fastPublic.median,
        unit: 'x',
        pass: decided ? null : false,
        detail: `public ${rps('public')} req/s, Portcullis fast path ${rps('portcullis')} req/s; per repetition ${fastPublic.runs.join(', ')}`,
      },
      {
        what: 'signed-in / public requests per second, oauth2-proxy',
        budget: 'report',
        value: peerPublic.median,
        unit: 'x',
        pass: null,
        detail: `public (Portcullis's Envoy) ${rps('public')} req/s, oauth2-proxy ${rps('oauth2Proxy')} req/s; per repetition ${peerPublic.runs.join(', ')}`,
      },
      {
        what: 'signed-in / public requests per second, Portcullis slow path (no decision cookie)',
        budget: 'report',
        value: slowPublic.median,
        unit: 'x',
        pass: null,
        detail: `public ${rps('public')} req/s, Portcullis slow path ${rps('portcullisSlow')} req/s; per repetition ${slowPublic.runs.join(', ')}`,
      },
      {
        what: `${CONCURRENT_SIGN_INS} concurrent sign-ins: errors`,
        budget: '0',
        value: errors.length,
        unit: `of ${attempts}`,
        pass: errors.length === 0,
        detail: `wall time per round ${bursts.map((b) => Math.round(b.wallMs)).join(', ')} ms; one sign-in (four redirects and the IdP's login) median ${medianOrNaN(signInMs)} ms, of which the callback as the client saw it ${medianOrNaN(callbackMs)} ms${errors.length > 0 ? `; first error: ${errors[0]}` : ''}`,
      },
      {
        what: "Portcullis's own time per sign-in, one at a time",
        budget: 'report',
        value: ownOne,
        unit: 'ms',
        pass: Number.isNaN(ownOne) || sequential.errors.length > 0 ? false : null,
        detail: `${ownTimeDetail([sequential])}${sequential.errors.length > 0 ? `; ${sequential.errors.length} failed: ${sequential.errors[0]}` : ''}`,
      },
      {
        what: `Portcullis's own time per sign-in, ${CONCURRENT_SIGN_INS} at once`,
        budget: 'report',
        value: ownBurst,
        unit: 'ms',
        pass: Number.isNaN(ownBurst) ? false : null,
        detail: `wall time, so it includes waiting for Portcullis's event loop behind the other sign-ins; ${ownTimeDetail(bursts)}`,
      },
    ],
    data: { connections: CONNECTIONS, repetitions, sequential, bursts },
  };
}
