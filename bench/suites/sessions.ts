import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import { benchCredentials, type BenchCredentials } from '../lib/bench-sessions.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
import { checksDuring, DECISION_COOKIE, fastPathCookie, waitForFastPath } from '../lib/fast-path.js';
import { postForm, startUpstream, statusOf, type Upstream } from '../lib/http.js';
import { startPortcullisChild, type PortcullisChild } from '../lib/portcullis-process.js';
import { logTail } from '../lib/processes.js';
import { startRedis } from '../lib/redis.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/wrk.js';

const PUBLIC_HOST = 'public.bench.test';
const AUTHZ_HOST = 'authz.bench.test';
/** One `shared_secret` for every instance: replicas share it, and the bench issues its handles. */
const SHARED_SECRET = Buffer.alloc(32, 7).toString('base64');
/** Sessions in each store: a realistic population, of which the load touches `COOKIES`. */
const SESSIONS = 10_000;
/** Distinct session cookies wrk sends in turn. */
const COOKIES = 100;
const CONNECTIONS = 16;
const RATIO_BUDGET = 0.9;
/** Issue 35: a sign-out through one instance stops the decision cookie at every instance's Envoy. */
const PROPAGATION_BUDGET_MS = 100;
/** The product's sign-out endpoint and its CSRF form field (its public HTTP interface). */
const SIGN_OUT_PATH = '/.portcullis/sign_out';
const CSRF_FIELD = 'portcullis_csrf';
const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';
/** Statuses of a protected route without a valid session: 302 to sign-in (browsers), 401 (API clients). */
const REFUSED = new Set([302, 401]);

/** One all-in-one Portcullis with its own Envoy. */
interface Instance {
  readonly ports: Ports;
  readonly child: PortcullisChild;
}

/** Per session of the sign-out run, in ms (the propagation times from the sign-out POST being sent). */
interface SignOutRun {
  readonly index: number;
  /** GET through the second instance of a session it never held (read from Redis). */
  readonly firstReadMs: number;
  /** The next GET with the session cookie only (from its cache). */
  readonly cachedReadMs: number;
  /** The sign-out POST through the first instance, to its answer. */
  readonly signOutMs: number;
  /** The sign-out POST sent, to the first instance's Envoy's first refusal of session and decision cookie. */
  readonly refusedByFirstMs: number;
  /** The same at the second instance's Envoy. */
  readonly refusedBySecondMs: number;
  /** The later of the two: refused at every Envoy. */
  readonly propagationMs: number;
}

/** The authz suite's two routes (public, and protected with `pass_identity_headers`), storage per `redisUrl`. */
function sessionsConfig(ports: Ports, upstream: Upstream, redisUrl: string | undefined): string {
  const to = `http://127.0.0.1:${upstream.port}`;
  const routes = [
    `  - from: https://${PUBLIC_HOST}\n    to: ${to}\n    allow_public_unauthenticated_access: true\n`,
    `  - from: https://${AUTHZ_HOST}\n    to: ${to}\n    allow_any_authenticated_user: true\n    pass_identity_headers: true\n`,
  ];
  const storage =
    redisUrl === undefined
      ? 'databroker_storage_type: memory\n'
      : `databroker_storage_type: redis\ndatabroker_storage_connection_string: ${redisUrl}\n`;
  return configYaml(
    ports,
    routes,
    `shared_secret: ${SHARED_SECRET}\njwt_claims_headers: [department]\n${storage}${SIGN_IN_YAML}`,
  );
}

/** Starts an instance in its own process with `sessions` sessions put through it, and waits until Envoy serves. */
async function startInstance(
  context: Context,
  name: string,
  upstream: Upstream,
  redisUrl: string | undefined,
  sessions: number,
): Promise<Instance> {
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, `${name}.yaml`);
  writeFileSync(configPath, sessionsConfig(ports, upstream, redisUrl));
  const child = await startPortcullisChild(context, {
    configPath,
    name,
    sessions,
    secret: SHARED_SECRET,
    timeoutMs: 600_000,
  });
  try {
    await waitServing(child.started, ports, {
      clusters: 1,
      hosts: [PUBLIC_HOST],
      intervalMs: 100,
      timeoutMs: 60_000,
    });
  } catch (err) {
    await child.stop();
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${name}: ${message}\n${logTail(child.started.logFile)}`);
  }
  return { ports, child };
}

/** Throws unless every cookie opens the protected route of `instance` (which also fills its cache). */
async function checkCookies(instance: Instance, cookies: readonly string[], name: string): Promise<void> {
  for (const cookie of cookies) {
    const status = await statusOf(instance.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } });
    if (status !== 200)
      throw new Error(`${name}: the protected route answered ${status} to a session cookie`);
  }
}

/** One repetition: the memory instance and the Redis instance under the same load. */
interface Repetition {
  readonly memory: WrkResult;
  readonly redis: WrkResult;
}

/** ABBA repetitions of wrk on both instances' protected route, the cookies in turn. */
async function measureThroughput(
  context: Context,
  instances: { readonly memory: Instance; readonly redis: Instance },
  cookies: readonly string[],
  upstream: Upstream,
): Promise<Repetition[]> {
  const reps = context.quick ? 2 : 12;
  const seconds = context.quick ? 1 : 2;
  await checkCookies(instances.memory, cookies, 'memory');
  await checkCookies(instances.redis, cookies, 'redis');
  if (upstream.lastHeaders()[ASSERTION_HEADER] === undefined)
    throw new Error(`the upstream got no ${ASSERTION_HEADER}: pass_identity_headers had no effect`);
  const load = (instance: Instance, time = seconds): Promise<WrkResult> =>
    runWrk({
      url: `http://127.0.0.1:${instance.ports.proxyPort}/`,
      headers: { Host: AUTHZ_HOST },
      cookies,
      connections: CONNECTIONS,
      seconds: time,
    });
  // Warm-up: JIT, connection pools, the assertion caches.
  await load(instances.memory, 2);
  await load(instances.redis, 2);
  const repetitions: Repetition[] = [];
  for (let rep = 0; rep < reps; rep++) {
    // ABBA order over repetitions, so drifting load on a shared machine hits both alike.
    let memory: WrkResult;
    let redis: WrkResult;
    if (rep % 2 === 0) {
      memory = await load(instances.memory);
      redis = await load(instances.redis);
    } else {
      redis = await load(instances.redis);
      memory = await load(instances.memory);
    }
    repetitions.push({ memory, redis });
    context.progress(
      `sessions ${rep + 1}/${reps}: memory ${Math.round(memory.requestsPerSecond)} vs redis ${Math.round(redis.requestsPerSecond)} req/s`,
    );
  }
  return repetitions;
}

/** GETs the protected route of `instance` with `cookie` until it is refused; when, in `performance.now()`. */
async function pollUntilRefused(
  instance: Instance,
  cookie: string,
  name: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const status = await statusOf(instance.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } });
    const at = performance.now();
    if (REFUSED.has(status)) return at;
    if (status !== 200) throw new Error(`${name} answered ${status} while the session was ending`);
    if (at > deadline) throw new Error(`${name} still accepted a signed-out session after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A GET of the protected route that must answer 200; its duration in ms. */
async function timedGet(instance: Instance, cookie: string, what: string): Promise<number> {
  const started = performance.now();
  const status = await statusOf(instance.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } });
  if (status !== 200) throw new Error(`${what} answered ${status}`);
  return performance.now() - started;
}

/** Throws unless `instance`'s Envoy answers `cookie` by itself (200, no Check). */
async function assertFastPath(instance: Instance, cookie: string, name: string): Promise<void> {
  const { result: status, checks } = await checksDuring(instance.ports.adminUrl, () =>
    statusOf(instance.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } }),
  );
  if (status !== 200 || checks !== 0)
    throw new Error(`${name} answered ${status} with ${checks} Checks to the decision cookie: no fast path`);
}

/**
 * For each of `count` sessions put through `first` (none of the throughput's): a GET through
 * `second` (reads it from Redis and caches it; its answer sets the decision cookie), another
 * (cached), then both Envoys must answer the session and decision cookies by themselves (no
 * Check). Then the real sign-out POST through `first` (cookie and CSRF token) while both
 * instances' Envoys are polled with the session and decision cookies until each refuses them.
 * One more session goes first, unmeasured, to warm those paths up.
 */
async function measureSignOut(
  context: Context,
  instances: { readonly first: Instance; readonly second: Instance },
  credentials: BenchCredentials,
  count: number,
): Promise<SignOutRun[]> {
  const stride = Math.floor(SESSIONS / COOKIES);
  const runs: SignOutRun[] = [];
  // Session k = 0 warms both instances' sign-out and refusal paths up and is not counted.
  for (let k = 0; k <= count; k++) {
    // Between the throughput's sessions (multiples of the stride), so none of those ends.
    const index = k * stride + (stride >> 1);
    const session = credentials.cookie(index);
    const firstRead = await timedGet(instances.second, session, 'the second instance, an unseen session');
    const cachedRead = await timedGet(instances.second, session, 'the second instance, a cached session');
    // The session and decision cookies, as a client that keeps cookies holds them.
    const target = {
      port: instances.second.ports.proxyPort,
      adminUrl: instances.second.ports.adminUrl,
      host: AUTHZ_HOST,
    };
    const fast = await fastPathCookie(target, session);
    if (fast === undefined)
      throw new Error(`no answer set ${DECISION_COOKIE}: this checkout has no fast path`);
    const cookie = fast.header;
    await assertFastPath(instances.first, cookie, 'the first instance');
    await assertFastPath(instances.second, cookie, 'the second instance');
    const started = performance.now();
    const [signedOut, refusedByFirst, refusedBySecond] = await Promise.all([
      postForm(
        instances.first.ports.proxyPort,
        AUTHZ_HOST,
        SIGN_OUT_PATH,
        { [CSRF_FIELD]: credentials.signOutToken(index) },
        { headers: { cookie } },
      ).then((status) => ({ status, at: performance.now() })),
      pollUntilRefused(instances.first, cookie, 'the first instance', 5_000),
      pollUntilRefused(instances.second, cookie, 'the second instance', 5_000),
    ]);
    if (signedOut.status !== 200 && signedOut.status !== 302)
      throw new Error(`the sign-out POST through the first instance answered ${signedOut.status}`);
    if (k === 0) continue;
    runs.push({
      index,
      firstReadMs: round(firstRead),
      cachedReadMs: round(cachedRead),
      signOutMs: round(signedOut.at - started),
      refusedByFirstMs: round(refusedByFirst - started),
      refusedBySecondMs: round(refusedBySecond - started),
      propagationMs: round(Math.max(refusedByFirst, refusedBySecond) - started),
    });
  }
  const propagation = summarize(runs.map((run) => run.propagationMs));
  context.progress(
    `sessions: sign-out to the decision cookie refused at both Envoys, median ${propagation.median} ms, worst ${propagation.max} ms`,
  );
  return runs;
}

/**
 * Sessions in Redis against sessions in memory, and sign-out across instances (issue 25). Three
 * all-in-one Portcullis processes, each with its own Envoy, the authz suite's routes and one
 * `shared_secret`: M (memory store) and A (Redis) each put 10,000 sessions through their store; B
 * (the same Redis) puts none, so it reads every session from Redis once and then from its cache.
 * Throughput: wrk at 16 connections on the protected route of M and of B, 100 session cookies in
 * turn (session cookies only: the slow path), ABBA repetitions; median of the per-repetition B/M
 * ratio. Sign-out (issue 35): for 50 other sessions, B serves the session and sets its decision
 * cookie, both Envoys answer the session and decision cookies by themselves, then the real sign-out
 * POST (cookie and CSRF token) goes through A while both A's and B's Envoys are polled with both
 * cookies; the time from the POST to the later of the two first refusals, median and worst.
 */
export async function sessionsSuite(context: Context): Promise<SuiteResult> {
  requireWrk();
  const signOuts = context.quick ? 10 : 50;
  const credentials = await benchCredentials(context.target.root, SHARED_SECRET);
  const cookies = Array.from({ length: COOKIES }, (_, i) =>
    credentials.cookie(i * Math.floor(SESSIONS / COOKIES)),
  );
  const stops: (() => Promise<void>)[] = [];
  let repetitions: Repetition[];
  let signOutRuns: SignOutRun[];
  let fastPathWaitMs: Record<string, number> = {};
  let puts: Record<string, { putMs: number; putRetries: number }> = {};
  try {
    const upstream = await startUpstream();
    stops.push(() => upstream.stop());
    const redis = await startRedis(context, 'sessions-redis', 600_000);
    stops.push(() => redis.stop());
    const memory = await startInstance(context, 'sessions-memory', upstream, undefined, SESSIONS);
    stops.push(() => memory.child.stop());
    const first = await startInstance(context, 'sessions-redis-a', upstream, redis.url, SESSIONS);
    stops.push(() => first.child.stop());
    const second = await startInstance(context, 'sessions-redis-b', upstream, redis.url, 0);
    stops.push(() => second.child.stop());
    // Each put revoked its session's tokens (10,000 at once fill the revocation set): measure once
    // every instance's fast path holds, as for a population that signed in earlier.
    const waitedMs: Record<string, number> = {};
    for (const [name, instance] of Object.entries({ memory, first, second })) {
      const target = { port: instance.ports.proxyPort, adminUrl: instance.ports.adminUrl, host: AUTHZ_HOST };
      const waited = await waitForFastPath(target, credentials.cookie(1));
      if (waited === undefined) throw new Error(`${name}: no answer set ${DECISION_COOKIE}: no fast path`);
      waitedMs[name] = Math.round(waited);
    }
    fastPathWaitMs = waitedMs;
    puts = Object.fromEntries(
      Object.entries({ memory, first }).map(([name, instance]) => [
        name,
        { putMs: instance.child.putMs, putRetries: instance.child.putRetries },
      ]),
    );
    context.progress(`sessions: the fast path held after ${JSON.stringify(waitedMs)} ms`);
    repetitions = await measureThroughput(context, { memory, redis: second }, cookies, upstream);
    signOutRuns = await measureSignOut(context, { first, second }, credentials, signOuts);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
  return sessionsResult(context, repetitions, signOutRuns, { fastPathWaitMs, puts });
}

function sessionsResult(
  context: Context,
  repetitions: readonly Repetition[],
  runs: readonly SignOutRun[],
  start: {
    readonly fastPathWaitMs: Readonly<Record<string, number>>;
    readonly puts: Readonly<Record<string, { putMs: number; putRetries: number }>>;
  },
): SuiteResult {
  const { fastPathWaitMs } = start;
  const ratio = summarize(repetitions.map((r) => r.redis.requestsPerSecond / r.memory.requestsPerSecond));
  const memoryRps = summarize(repetitions.map((r) => r.memory.requestsPerSecond));
  const redisRps = summarize(repetitions.map((r) => r.redis.requestsPerSecond));
  const memoryP50 = summarize(repetitions.map((r) => r.memory.p50Us));
  const redisP50 = summarize(repetitions.map((r) => r.redis.p50Us));
  const propagation = summarize(runs.map((run) => run.propagationMs));
  const signOut = summarize(runs.map((run) => run.signOutMs));
  const byFirst = summarize(runs.map((run) => run.refusedByFirstMs));
  const bySecond = summarize(runs.map((run) => run.refusedBySecondMs));
  const firstRead = summarize(runs.map((run) => run.firstReadMs));
  const cachedRead = summarize(runs.map((run) => run.cachedReadMs));
  const seconds = context.quick ? 1 : 2;
  return {
    name: 'sessions',
    how: `Three all-in-one Portcullis processes with their own Envoys (the authz suite's routes): M keeps sessions in memory, A and B share one local redis-server; M and A each put ${SESSIONS.toLocaleString('en-US')} sessions, B none (it reads each from Redis once, then from its cache); measured once every instance's fast path holds (the puts revoked their sessions' tokens; waited ${Object.entries(
      fastPathWaitMs,
    )
      .map(([name, ms]) => `${name} ${Math.round(ms / 1000)} s`)
      .join(
        ', ',
      )}). Throughput: wrk, ${CONNECTIONS} connections, ${COOKIES} session cookies in turn, on M's and B's protected route (pass_identity_headers; session cookies only, so the slow path), ${repetitions.length} ABBA repetitions of ${seconds} s; median of B/M. Sign-out: ${runs.length} other sessions (after one unmeasured), each served by B, which sets its ${DECISION_COOKIE} cookie; both Envoys must answer the session and decision cookies without a Check; then signed out through A with the real POST ${SIGN_OUT_PATH} (both cookies and the CSRF token) while A's and B's Envoys are polled with both cookies every ~1 ms; POST sent to the later of the two first 302/401s.`,
    measurements: [
      {
        what: 'authorized requests per second, sessions in Redis / in memory',
        budget: `>= ${RATIO_BUDGET}`,
        value: ratio.median,
        unit: 'x',
        pass: ratio.median >= RATIO_BUDGET,
        detail: `memory ${Math.round(memoryRps.median)} req/s (p50 ${memoryP50.median} us), redis ${Math.round(redisRps.median)} req/s (p50 ${redisP50.median} us); per repetition ${ratio.runs.join(', ')}`,
      },
      {
        what: 'sign-out through one instance to the decision cookie refused at both Envoys, median',
        budget: 'report',
        value: propagation.median,
        unit: 'ms',
        pass: null,
        detail: `${runs.length} sessions; min ${propagation.min} ms; refused by the signing-out instance's Envoy in ${byFirst.median} ms (worst ${byFirst.max}), by the other's in ${bySecond.median} ms (worst ${bySecond.max}); the sign-out POST itself answered in ${signOut.median} ms (median)`,
      },
      {
        what: 'sign-out through one instance to the decision cookie refused at both Envoys, worst',
        budget: `< ${PROPAGATION_BUDGET_MS} ms`,
        value: propagation.max,
        unit: 'ms',
        pass: propagation.max < PROPAGATION_BUDGET_MS,
        detail: `worst of ${runs.length}; per session ${propagation.runs.join(', ')} ms`,
      },
      {
        what: 'first request of a session new to an instance (read from Redis), median',
        budget: 'report',
        value: firstRead.median,
        unit: 'ms',
        pass: null,
        detail: `one GET through B's Envoy, fresh connection; the next GET (cached): ${cachedRead.median} ms; worst first ${firstRead.max} ms`,
      },
    ],
    data: {
      sessions: SESSIONS,
      cookies: COOKIES,
      connections: CONNECTIONS,
      secondsPerRun: seconds,
      ...start,
      repetitions,
      signOuts: runs,
    },
  };
}
