import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import { benchCredentials, type BenchCredentials } from '../lib/bench-sessions.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
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
/** The test bound for a sign-out to reach another instance. */
const PROPAGATION_BUDGET_MS = 1_000;
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

/** Per session of the sign-out run, in ms from the sign-out POST being sent (first two: own GETs). */
interface SignOutRun {
  readonly index: number;
  /** GET through the second instance of a session it never held (read from Redis). */
  readonly firstReadMs: number;
  /** The next GET (from its cache). */
  readonly cachedReadMs: number;
  /** The sign-out POST through the first instance, to its answer. */
  readonly signOutMs: number;
  /** The sign-out POST sent, to the second instance's first refusal. */
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

/** GETs the protected route of `instance` with `cookie` until it is refused; the status and when. */
async function pollUntilRefused(
  instance: Instance,
  cookie: string,
  timeoutMs: number,
): Promise<{ status: number; at: number }> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const status = await statusOf(instance.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } });
    const at = performance.now();
    if (REFUSED.has(status)) return { status, at };
    if (status !== 200)
      throw new Error(`the second instance answered ${status} while the session was ending`);
    if (at > deadline)
      throw new Error(`the second instance still accepted a signed-out session after ${timeoutMs} ms`);
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

/**
 * For each of `count` sessions put through `first` (none of the throughput's): a GET through
 * `second` (reads it from Redis and caches it), another (cached), then the real sign-out POST
 * through `first` (cookie and CSRF token) while `second` is polled until it refuses the cookie.
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
    const cookie = credentials.cookie(index);
    const firstReadMs = await timedGet(instances.second, cookie, 'the second instance, an unseen session');
    const cachedReadMs = await timedGet(instances.second, cookie, 'the second instance, a cached session');
    const started = performance.now();
    const [signedOut, refused] = await Promise.all([
      postForm(
        instances.first.ports.proxyPort,
        AUTHZ_HOST,
        SIGN_OUT_PATH,
        { [CSRF_FIELD]: credentials.signOutToken(index) },
        { headers: { cookie } },
      ).then((status) => ({ status, at: performance.now() })),
      pollUntilRefused(instances.second, cookie, 5_000),
    ]);
    if (signedOut.status !== 200 && signedOut.status !== 302)
      throw new Error(`the sign-out POST through the first instance answered ${signedOut.status}`);
    const after = await statusOf(instances.first.ports.proxyPort, AUTHZ_HOST, { headers: { cookie } });
    if (!REFUSED.has(after)) throw new Error(`the first instance answered ${after} after signing out`);
    if (k === 0) continue;
    runs.push({
      index,
      firstReadMs: round(firstReadMs),
      cachedReadMs: round(cachedReadMs),
      signOutMs: round(signedOut.at - started),
      propagationMs: round(refused.at - started),
    });
  }
  const propagation = summarize(runs.map((run) => run.propagationMs));
  context.progress(
    `sessions: sign-out propagation median ${propagation.median} ms, worst ${propagation.max} ms`,
  );
  return runs;
}

/**
 * Sessions in Redis against sessions in memory, and sign-out across instances (issue 25). Three
 * all-in-one Portcullis processes, each with its own Envoy, the authz suite's routes and one
 * `shared_secret`: M (memory store) and A (Redis) each put 10,000 sessions through their store; B
 * (the same Redis) puts none, so it reads every session from Redis once and then from its cache.
 * Throughput: wrk at 16 connections on the protected route of M and of B, 100 session cookies in
 * turn, ABBA repetitions; median of the per-repetition B/M ratio. Sign-out: for 50 other sessions,
 * B serves the session, then the real sign-out POST (cookie and CSRF token) goes through A while B
 * is polled; the time from the POST to B's first refusal, median and worst.
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
    repetitions = await measureThroughput(context, { memory, redis: second }, cookies, upstream);
    signOutRuns = await measureSignOut(context, { first, second }, credentials, signOuts);
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
  return sessionsResult(context, repetitions, signOutRuns);
}

function sessionsResult(
  context: Context,
  repetitions: readonly Repetition[],
  runs: readonly SignOutRun[],
): SuiteResult {
  const ratio = summarize(repetitions.map((r) => r.redis.requestsPerSecond / r.memory.requestsPerSecond));
  const memoryRps = summarize(repetitions.map((r) => r.memory.requestsPerSecond));
  const redisRps = summarize(repetitions.map((r) => r.redis.requestsPerSecond));
  const memoryP50 = summarize(repetitions.map((r) => r.memory.p50Us));
  const redisP50 = summarize(repetitions.map((r) => r.redis.p50Us));
  const propagation = summarize(runs.map((run) => run.propagationMs));
  const signOut = summarize(runs.map((run) => run.signOutMs));
  const firstRead = summarize(runs.map((run) => run.firstReadMs));
  const cachedRead = summarize(runs.map((run) => run.cachedReadMs));
  const seconds = context.quick ? 1 : 2;
  return {
    name: 'sessions',
    how: `Three all-in-one Portcullis processes with their own Envoys (the authz suite's routes): M keeps sessions in memory, A and B share one local redis-server; M and A each put ${SESSIONS.toLocaleString('en-US')} sessions, B none (it reads each from Redis once, then from its cache). Throughput: wrk, ${CONNECTIONS} connections, ${COOKIES} session cookies in turn, on M's and B's protected route (pass_identity_headers), ${repetitions.length} ABBA repetitions of ${seconds} s; median of B/M. Sign-out: ${runs.length} other sessions (after one unmeasured), each served by B, then signed out through A with the real POST ${SIGN_OUT_PATH} (cookie and CSRF token) while B is polled every ~1 ms; POST sent to B's first 302/401.`,
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
        what: 'sign-out through one instance refused by another, median',
        budget: 'report',
        value: propagation.median,
        unit: 'ms',
        pass: null,
        detail: `${runs.length} sessions; min ${propagation.min} ms; the sign-out POST itself answered in ${signOut.median} ms (median)`,
      },
      {
        what: 'sign-out through one instance refused by another, worst',
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
      repetitions,
      signOuts: runs,
    },
  };
}
