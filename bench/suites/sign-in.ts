import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { completeLogin } from '../../test/support/idp-login.js';
import { startTestIdp, type TestIdp } from '../../test/support/test-idp.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
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
import { until, type Started } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { CookieJar, signIn, type SignInOptions } from '../lib/sign-in-client.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/wrk.js';

const PUBLIC_HOST = 'public.bench.test';
const AUTHZ_HOST = 'authz.bench.test';
const AUTHENTICATE_HOST = 'authenticate.bench.test';
const CALLBACK_PATH = '/oauth2/callback';
const USER = 'alice';
const PASSWORD = 'alice-password';
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

/** Sign-in through Envoy: `*.bench.test` goes to its listener, the IdP's URLs to `completeLogin`. */
function browser(ports: Ports, idp: TestIdp, jar = new CookieJar()): SignInOptions {
  const idpOrigin = new URL(idp.issuer).origin;
  return {
    jar,
    isIdp: (url) => url.origin === idpOrigin,
    login: async (authorizationUrl) => (await completeLogin(authorizationUrl, USER, PASSWORD)).href,
    connect: (url) => ({
      host: '127.0.0.1',
      port: url.hostname.endsWith('.bench.test') ? ports.proxyPort : Number(url.port || 80),
    }),
    timeoutMs: 30_000,
  };
}

/** One sign-in from `start` that must end on `start` itself with a 200 from the upstream. */
async function signInTo(start: URL, options: SignInOptions): Promise<{ ms: number; callbackMs: number }> {
  const began = performance.now();
  const outcome = await signIn(start, options);
  if (outcome.status !== 200 || outcome.url.href !== start.href)
    throw new Error(
      `sign-in from ${start.href} ended with ${outcome.status} at ${outcome.url.href}: ${outcome.steps.map((step) => `${step.status} ${step.url}`).join(' -> ')}`,
    );
  const callback = outcome.steps.find((step) => new URL(step.url).pathname === CALLBACK_PATH);
  return { ms: performance.now() - began, callbackMs: callback?.ms ?? NaN };
}

/**
 * Portcullis's own time per sign-in, and its time at the IdP, from its callback's `signed in` log
 * line (pino JSON): `ownMs` is the callback's handling without the IdP calls (`idpMs`: the code
 * exchange, i.e. token endpoint, JWKS and userinfo). Lines from `fromLine` on; none when the
 * product logs no such line.
 */
function callbackTimes(logFile: string, fromLine: number): { own: number[]; idp: number[]; lines: number } {
  const lines = readFileSync(logFile, 'utf8').split('\n');
  const own: number[] = [];
  const idp: number[] = [];
  for (const line of lines.slice(fromLine)) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { ownMs?: unknown; idpMs?: unknown };
      if (typeof entry.ownMs === 'number' && typeof entry.idpMs === 'number') {
        own.push(entry.ownMs);
        idp.push(entry.idpMs);
      }
    } catch {
      // not a log object
    }
  }
  return { own, idp, lines: lines.length - 1 };
}

/** One repetition of the throughput comparison. */
interface Repetition {
  readonly public: WrkResult;
  readonly portcullis: WrkResult;
  readonly oauth2Proxy: WrkResult;
}

/** One batch of sign-ins through Portcullis. */
interface Batch {
  /** How many ran at once. */
  readonly concurrency: number;
  readonly errors: readonly string[];
  readonly wallMs: number;
  readonly signInMs: readonly number[];
  readonly callbackMs: readonly number[];
  /** From the callback's log lines (see `callbackTimes`). */
  readonly ownMs: readonly number[];
  readonly idpMs: readonly number[];
}

/** The throughput comparison: `reps` rounds of the three loads, order rotated every round. */
async function compareThroughput(
  context: Context,
  loads: Readonly<Record<keyof Repetition, () => Promise<WrkResult>>>,
  reps: number,
): Promise<Repetition[]> {
  const names: (keyof Repetition)[] = ['public', 'portcullis', 'oauth2Proxy'];
  const repetitions: Repetition[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // Rotated order, so drifting load on a shared machine hits all three alike.
    const order = [...names.slice(rep % 3), ...names.slice(0, rep % 3)];
    const results: Partial<Record<keyof Repetition, WrkResult>> = {};
    for (const name of order) results[name] = await loads[name]();
    const repetition = results as Repetition;
    repetitions.push(repetition);
    context.progress(
      `sign-in throughput ${rep + 1}/${reps}: public ${Math.round(repetition.public.requestsPerSecond)}, Portcullis ${Math.round(repetition.portcullis.requestsPerSecond)}, oauth2-proxy ${Math.round(repetition.oauth2Proxy.requestsPerSecond)} req/s`,
    );
  }
  return repetitions;
}

/**
 * `count` sign-ins through Portcullis, `concurrency` at a time, each its own browser (cookie jar)
 * to its own URL under `/<label>/`; collects each one's outcome and the callback log lines.
 */
async function signInBatch(
  ports: Ports,
  idp: TestIdp,
  portcullis: Started,
  options: { readonly label: string; readonly count: number; readonly concurrency: number },
): Promise<Batch> {
  const fromLine = callbackTimes(portcullis.logFile, 0).lines;
  const settled: PromiseSettledResult<{ ms: number; callbackMs: number }>[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let user = next++; user < options.count; user = next++) {
      const start = new URL(`http://${AUTHZ_HOST}:${ports.proxyPort}/${options.label}/${user}?n=${user}`);
      settled.push(
        await signInTo(start, browser(ports, idp)).then(
          (value) => ({ status: 'fulfilled', value }) as const,
          (reason: unknown) => ({ status: 'rejected', reason }) as const,
        ),
      );
    }
  };
  const began = performance.now();
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const wallMs = performance.now() - began;
  const done = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const errors = settled.flatMap((result) =>
    result.status === 'rejected'
      ? [result.reason instanceof Error ? result.reason.message : String(result.reason)]
      : [],
  );
  // Each completed sign-in logged its line before answering; allow the log a moment to land.
  await until(
    () => callbackTimes(portcullis.logFile, fromLine).own.length >= done.length,
    'the sign-in log lines',
    { timeoutMs: 2000 },
  ).catch(() => undefined);
  const times = callbackTimes(portcullis.logFile, fromLine);
  return {
    concurrency: options.concurrency,
    errors,
    wallMs,
    signInMs: done.map((result) => round(result.ms)),
    callbackMs: done.map((result) => round(result.callbackMs)),
    ownMs: times.own,
    idpMs: times.idp,
  };
}

/** The `fraction` percentile of `values` (nearest rank), rounded; NaN when there are none. */
function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? NaN);
}

/** Median of `values`, or NaN when there are none. */
function medianOrNaN(values: readonly number[]): number {
  return values.length === 0 ? NaN : summarize(values).median;
}

/**
 * Sign-in, measured against oauth2-proxy (issue 24 "Speed"). One local IdP (test/support's
 * oidc-provider on loopback), one upstream; Portcullis through its command with Envoy, oauth2-proxy
 * v7.15.6 built with `go install` (cookie sessions, PKCE, same IdP and upstream). Each side gets a
 * session by a real, browserless sign-in through its own flow (`completeLogin` at the IdP); then
 * the public route, Portcullis's protected route and oauth2-proxy take the authz suite's wrk load
 * in rotated order, and rounds of 200 concurrent sign-ins go through Portcullis, each of which must
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
    const portcullisCookie = portcullisJar.header(protectedUrl);
    const peerCookie = peerJar.header(new URL(`${peer.origin}/`));
    if (portcullisCookie === undefined || peerCookie === undefined)
      throw new Error('a sign-in set no cookie');

    // wrk counts only 4xx and 5xx as errors: a redirect to sign in would pass as throughput.
    const statuses = [
      await statusOf(ports.proxyPort, PUBLIC_HOST),
      await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: portcullisCookie } }),
      await statusOf(proxyPort, `127.0.0.1:${proxyPort}`, { headers: { cookie: peerCookie } }),
    ];
    if (statuses.some((status) => status !== 200))
      throw new Error(`public, Portcullis and oauth2-proxy answered ${statuses.join(', ')} (not all 200)`);
    const proxyUrl = `http://127.0.0.1:${ports.proxyPort}/`;
    const load =
      (url: string, headers: Record<string, string>, time = seconds) =>
      () =>
        runWrk({ url, headers, connections: CONNECTIONS, seconds: time });
    const loads = {
      public: load(proxyUrl, { Host: PUBLIC_HOST }),
      portcullis: load(proxyUrl, { Host: AUTHZ_HOST, Cookie: portcullisCookie }),
      oauth2Proxy: load(`${peer.origin}/`, { Cookie: peerCookie }),
    };
    // Warm-up: JIT, connection pools, caches.
    await compareThroughput(context, loads, 1);
    const repetitions = await compareThroughput(context, loads, reps);

    // Sign-ins one at a time (Portcullis's own time without queueing), then bursts of 200 at once.
    const sequential = await signInBatch(ports, idp, portcullis, {
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
      const options = { label, count: CONCURRENT_SIGN_INS, concurrency: CONCURRENT_SIGN_INS };
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

/** "median m ms (min, p90, max) over n sign-ins; IdP calls median i ms", or why there is none. */
function ownTimeDetail(batches: readonly Batch[]): string {
  const own = batches.flatMap((batch) => batch.ownMs);
  if (own.length === 0)
    return 'no callback log line with ownMs and idpMs: the product did not log its sign-in timings';
  const { min, max } = summarize(own);
  const idpMs = medianOrNaN(batches.flatMap((batch) => batch.idpMs));
  return `${own.length} sign-ins, ${batches[0]?.concurrency ?? 0} at a time: min ${min}, p90 ${percentile(own, 0.9)}, max ${max} ms; the IdP calls (token, JWKS, userinfo) median ${idpMs} ms`;
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
  const versusPublic = of((r) => r.portcullis.requestsPerSecond / r.public.requestsPerSecond);
  const rps = (pick: (r: Repetition) => WrkResult) => Math.round(of((r) => pick(r).requestsPerSecond).median);
  const errors = bursts.flatMap((b) => b.errors);
  const signInMs = bursts.flatMap((b) => b.signInMs);
  const callbackMs = bursts.flatMap((b) => b.callbackMs).filter((ms) => !Number.isNaN(ms));
  const attempts = bursts.length * CONCURRENT_SIGN_INS;
  const ownOne = medianOrNaN(sequential.ownMs);
  const ownBurst = medianOrNaN(bursts.flatMap((b) => b.ownMs));
  return {
    name: 'sign-in',
    how: `One local IdP (oidc-provider), one upstream. Portcullis (command, Envoy) vs oauth2-proxy ${OAUTH2_PROXY_VERSION} (go install; cookie sessions, PKCE S256, request logging off), each with a session made by a real browserless sign-in; wrk on loopback, ${settings.reps} repetitions of public route / Portcullis protected route / oauth2-proxy at ${CONNECTIONS} connections, ${settings.seconds} s each, rotated order; medians of per-repetition ratios. Then sign-ins through Portcullis (each a fresh cookie jar, to its own URL, ending 200 on it): ${sequential.signInMs.length + sequential.errors.length} one at a time, then ${bursts.length} rounds of ${CONCURRENT_SIGN_INS} at once. Portcullis's own time per sign-in is its callback log line's ownMs (the callback's handling without its IdP calls, idpMs).`,
    measurements: [
      {
        what: 'signed-in requests per second, Portcullis / oauth2-proxy',
        budget: `>= ${RATIO_BUDGET}`,
        value: versusPeer.median,
        unit: 'x',
        pass: versusPeer.median >= RATIO_BUDGET,
        detail: `${CONNECTIONS} connections: Portcullis ${rps((r) => r.portcullis)} req/s, oauth2-proxy ${rps((r) => r.oauth2Proxy)} req/s; per repetition ${versusPeer.runs.join(', ')}`,
      },
      {
        what: 'signed-in / public requests per second (real sign-in session)',
        budget: 'report',
        value: versusPublic.median,
        unit: 'x',
        pass: null,
        detail: `public ${rps((r) => r.public)} req/s; per repetition ${versusPublic.runs.join(', ')}`,
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
