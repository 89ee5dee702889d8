import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
import {
  checksDuring,
  DECISION_COOKIE,
  fastPathCookie,
  waitForFastPath,
  type FastPathCookie,
} from '../lib/fast-path.js';
import { startUpstream, statusOf, type Upstream } from '../lib/http.js';
import { startPortcullisChild } from '../lib/portcullis-process.js';
import type { Measurement, SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';
import { requireWrk, runWrk, type WrkResult } from '../lib/wrk.js';

const PUBLIC_HOST = 'public.bench.test';
const AUTHZ_HOST = 'authz.bench.test';
/** A fixed `shared_secret`, so the session handles the child issues are the ones Portcullis accepts. */
const SHARED_SECRET = Buffer.alloc(32, 9).toString('base64');
const SESSIONS = 100_000;
const CONNECTIONS = 16;
/** Issue 35: the fast path's authorized / public throughput, and its added p50 at one connection. */
const RATIO_BUDGET = 0.8;
const ADDED_P50_BUDGET_US = 60;
/** Share of the fast-path loads' requests that may still ask Portcullis (a token renewed mid-run). */
const FAST_CHECKS_ALLOWED = 0.01;
/** The signed identity assertion `pass_identity_headers` adds (the product's ext_authz puts it). */
const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';

/** The two measured routes, to the same upstream: one public, one behind ext_authz. */
function authzConfig(ports: Ports, upstream: Upstream): string {
  const to = `http://127.0.0.1:${upstream.port}`;
  const routes = [
    `  - from: https://${PUBLIC_HOST}\n    to: ${to}\n    allow_public_unauthenticated_access: true\n`,
    `  - from: https://${AUTHZ_HOST}\n    to: ${to}\n    allow_any_authenticated_user: true\n    pass_identity_headers: true\n`,
  ];
  return configYaml(
    ports,
    routes,
    `shared_secret: ${SHARED_SECRET}\njwt_claims_headers: [department]\n${SIGN_IN_YAML}`,
  );
}

/** The three loads: the public route, the protected route with the session cookie only, and with both cookies. */
type Load = 'public' | 'slow' | 'fast';
const LOADS: readonly Load[] = ['public', 'slow', 'fast'];

/**
 * The order of the loads in repetition `rep`: rotated every other repetition and reversed on odd
 * ones, so six repetitions run every order once and drifting load on a shared machine hits all
 * alike.
 */
function orderOf(rep: number, loads: readonly Load[]): Load[] {
  const shift = (rep >> 1) % loads.length;
  const rotated = [...loads.slice(shift), ...loads.slice(0, shift)];
  return rep % 2 === 0 ? rotated : rotated.reverse();
}

/** One repetition: the loads at `CONNECTIONS` connections, then at one connection. */
interface Repetition {
  readonly order: readonly Load[];
  readonly publicLoaded: WrkResult;
  readonly slowLoaded: WrkResult;
  readonly publicOne: WrkResult;
  readonly slowOne: WrkResult;
  /** Absent when no answer set a decision cookie (a checkout without the fast path). */
  readonly fastLoaded?: WrkResult;
  readonly fastOne?: WrkResult;
  /** Checks Envoy sent during this repetition's two fast-path loads. */
  readonly fastChecks?: number;
}

/**
 * Authorized throughput and added latency, side by side on one Envoy and one upstream: a public
 * route (Envoy skips ext_authz) and a protected route (`allow_any_authenticated_user`,
 * `pass_identity_headers`) requested by a client with the session cookie only (the slow path:
 * every request a Check) and by one that keeps cookies (the session cookie and the decision cookie
 * the protected route's answer set: Envoy decides by itself). Portcullis all-in-one in its own
 * process with 100,000 sessions in its store, `decision_token_lifetime` at its default (2 minutes:
 * the decision cookie is fetched again at the start of every repetition), load from wrk on
 * loopback, once the fast path holds (each put revoked its session's tokens, and 100,000 at once
 * overflow the revocation set, which then refuses every token for about a token lifetime; the
 * suite waits that out, as for a population that signed in earlier, and reports the wait). Each
 * repetition runs the three loads in a rotating order at 16 connections (requests
 * per second), then at one connection (p50); the suite quotes the medians of the per-repetition
 * ratios and differences, and counts the Checks Envoy sent during the fast-path loads.
 */
export async function authzSuite(context: Context): Promise<SuiteResult> {
  requireWrk();
  const reps = context.quick ? 2 : 12;
  const seconds = context.quick ? 1 : 2;
  const upstream = await startUpstream();
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, 'authz.yaml');
  writeFileSync(configPath, authzConfig(ports, upstream));
  const repetitions: Repetition[] = [];
  const began = performance.now();
  /** Start to the store filled, and then to the fast path holding (see `waitForFastPath`). */
  let startMs = NaN;
  let fastPathWaitMs: number | undefined;
  let puts = { putMs: NaN, putRetries: NaN };
  try {
    const portcullis = await startPortcullisChild(context, {
      configPath,
      name: 'authz',
      sessions: SESSIONS,
      secret: SHARED_SECRET,
      timeoutMs: 600_000,
    });
    startMs = performance.now() - began;
    puts = { putMs: portcullis.putMs, putRetries: portcullis.putRetries };
    try {
      await waitServing(portcullis.started, ports, {
        clusters: 1,
        hosts: [PUBLIC_HOST],
        intervalMs: 100,
        timeoutMs: 60_000,
      });
      const status = await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: portcullis.cookie } });
      if (status !== 200) throw new Error(`the protected route answered ${status} with the session cookie`);
      if (upstream.lastHeaders()[ASSERTION_HEADER] === undefined)
        throw new Error(`the upstream got no ${ASSERTION_HEADER}: pass_identity_headers had no effect`);
      const target = { port: ports.proxyPort, adminUrl: ports.adminUrl, host: AUTHZ_HOST };
      const decision = (): Promise<FastPathCookie | undefined> => fastPathCookie(target, portcullis.cookie);
      // Putting the sessions revoked each one: wait until those revocations no longer refuse tokens.
      fastPathWaitMs = await waitForFastPath(target, portcullis.cookie);
      if (fastPathWaitMs !== undefined)
        context.progress(`authz: the fast path held after ${Math.round(fastPathWaitMs / 1000)} s`);
      const first = fastPathWaitMs === undefined ? undefined : await decision();
      if (first !== undefined) {
        // The last request the upstream saw is this one, decided by Envoy alone.
        await statusOf(ports.proxyPort, AUTHZ_HOST, { headers: { cookie: first.header } });
        if (upstream.lastHeaders()[ASSERTION_HEADER] === undefined)
          throw new Error(`the upstream got no ${ASSERTION_HEADER} on the fast path`);
      } else context.progress(`authz: no answer set ${DECISION_COOKIE}; measuring the slow path only`);
      const loads = first === undefined ? LOADS.filter((load) => load !== 'fast') : LOADS;
      const url = `http://127.0.0.1:${ports.proxyPort}/`;
      const load = (cookie: string | undefined, connections: number, time = seconds): Promise<WrkResult> =>
        runWrk({
          url,
          headers: cookie === undefined ? { Host: PUBLIC_HOST } : { Host: AUTHZ_HOST, Cookie: cookie },
          connections,
          seconds: time,
        });
      // Warm-up: JIT, connection pools, the cached assertion, the token verification cache.
      await load(undefined, CONNECTIONS, 1);
      await load(portcullis.cookie, CONNECTIONS, 2);
      if (first !== undefined) await load(first.header, CONNECTIONS, 2);
      for (let rep = 0; rep < reps; rep++) {
        // A fresh decision cookie each repetition: it lives two minutes.
        const fast = first === undefined ? undefined : await decision();
        const cookies: Record<Load, string | undefined> = {
          public: undefined,
          slow: portcullis.cookie,
          fast: fast?.header,
        };
        const order = orderOf(rep, loads);
        let fastChecks = 0;
        const round = async (connections: number): Promise<Partial<Record<Load, WrkResult>>> => {
          const results: Partial<Record<Load, WrkResult>> = {};
          for (const name of order) {
            if (name !== 'fast') results[name] = await load(cookies[name], connections);
            else {
              const { result, checks } = await checksDuring(ports.adminUrl, () =>
                load(cookies.fast, connections),
              );
              results.fast = result;
              fastChecks += checks;
            }
          }
          return results;
        };
        const loaded = await round(CONNECTIONS);
        const one = await round(1);
        const repetition: Repetition = {
          order,
          publicLoaded: loaded.public as WrkResult,
          slowLoaded: loaded.slow as WrkResult,
          publicOne: one.public as WrkResult,
          slowOne: one.slow as WrkResult,
          ...(fast === undefined
            ? {}
            : { fastLoaded: loaded.fast as WrkResult, fastOne: one.fast as WrkResult, fastChecks }),
        };
        repetitions.push(repetition);
        const rps = (result: WrkResult | undefined): string =>
          result === undefined ? '-' : String(Math.round(result.requestsPerSecond));
        context.progress(
          `authz ${rep + 1}/${reps} (${order.join(', ')}): public ${rps(loaded.public)}, slow ${rps(loaded.slow)}, fast ${rps(loaded.fast)} req/s; p50 ${one.public?.p50Us} / ${one.slow?.p50Us} / ${one.fast?.p50Us ?? '-'} us; fast-path Checks ${fastChecks}`,
        );
      }
    } finally {
      await portcullis.stop();
    }
  } finally {
    await upstream.stop();
  }
  return {
    name: 'authz',
    how: `Same Envoy, same upstream: public route vs protected route (pass_identity_headers; Portcullis via startAllInOne in its own process, ${SESSIONS.toLocaleString('en-US')} sessions, decision_token_lifetime at its default 2m) requested with the session cookie only (slow path: a Check per request) and with the session cookie plus the ${DECISION_COOKIE} cookie its answer set (fast path; fetched again each repetition, and proven by Envoy's ext_authz stats; measured once the fast path holds, as putting the sessions revoked each: waited ${fastPathWaitMs === undefined ? '-' : Math.round(fastPathWaitMs / 1000)} s after the ${Math.round(startMs / 1000)} s the start and the puts took); wrk on loopback, ${reps} repetitions of the three loads in rotating order at ${CONNECTIONS} connections then 1 connection, ${seconds} s each; medians of per-repetition ratios and differences.`,
    measurements: authzMeasurements(repetitions),
    data: {
      sessions: SESSIONS,
      connections: CONNECTIONS,
      secondsPerRun: seconds,
      startMs: Math.round(startMs),
      ...puts,
      fastPathWaitMs: fastPathWaitMs === undefined ? null : Math.round(fastPathWaitMs),
      repetitions,
    },
  };
}

/** The suite's rows: the fast path against its budgets, the slow path reported beside it. */
function authzMeasurements(repetitions: readonly Repetition[]): Measurement[] {
  const of = (pick: (r: Repetition) => number) => summarize(repetitions.map(pick));
  const slowRatio = of((r) => r.slowLoaded.requestsPerSecond / r.publicLoaded.requestsPerSecond);
  const slowAdded = of((r) => r.slowOne.p50Us - r.publicOne.p50Us);
  const publicRps = Math.round(of((r) => r.publicLoaded.requestsPerSecond).median);
  const slowRps = Math.round(of((r) => r.slowLoaded.requestsPerSecond).median);
  const publicP50 = of((r) => r.publicOne.p50Us).median;
  const slowP50 = of((r) => r.slowOne.p50Us).median;
  const slowRows: Measurement[] = [
    {
      what: 'slow path (no decision cookie) / public requests per second',
      budget: 'report',
      value: slowRatio.median,
      unit: 'x',
      pass: null,
      detail: `${CONNECTIONS} connections: public ${publicRps} req/s, slow path ${slowRps} req/s; per repetition ${slowRatio.runs.join(', ')}`,
    },
    {
      what: 'added p50 latency, one connection, slow path (no decision cookie)',
      budget: 'report',
      value: round(slowAdded.median),
      unit: 'us',
      pass: null,
      detail: `public p50 ${publicP50} us, slow path p50 ${slowP50} us; per repetition ${slowAdded.runs.join(', ')} us`,
    },
  ];
  const fastReps = repetitions.filter((r) => r.fastLoaded !== undefined && r.fastOne !== undefined);
  if (fastReps.length === 0) {
    const none = `no answer set ${DECISION_COOKIE}: this checkout has no fast path (or it is off)`;
    return [
      {
        what: 'authorized / public requests per second (fast path)',
        budget: `>= ${RATIO_BUDGET}`,
        value: NaN,
        unit: 'x',
        pass: false,
        detail: none,
      },
      {
        what: 'added p50 latency, one connection (fast path)',
        budget: `<= ${ADDED_P50_BUDGET_US} us`,
        value: NaN,
        unit: 'us',
        pass: false,
        detail: none,
      },
      ...slowRows,
    ];
  }
  const fastOf = (pick: (r: Required<Repetition>) => number) =>
    summarize((fastReps as Required<Repetition>[]).map(pick));
  const ratio = fastOf((r) => r.fastLoaded.requestsPerSecond / r.publicLoaded.requestsPerSecond);
  const added = fastOf((r) => r.fastOne.p50Us - r.publicOne.p50Us);
  const fastRps = Math.round(fastOf((r) => r.fastLoaded.requestsPerSecond).median);
  const fastP50 = fastOf((r) => r.fastOne.p50Us).median;
  const checks = fastReps.reduce((sum, r) => sum + (r.fastChecks ?? 0), 0);
  const requests = fastReps.reduce(
    (sum, r) => sum + (r.fastLoaded?.requests ?? 0) + (r.fastOne?.requests ?? 0),
    0,
  );
  const decided = checks <= requests * FAST_CHECKS_ALLOWED;
  const checkNote = `Checks during the fast-path loads: ${checks} of ${requests.toLocaleString('en-US')} requests${decided ? '' : ' (too many: Envoy did not decide by itself, so this is not the fast path)'}`;
  return [
    {
      what: 'authorized / public requests per second (fast path)',
      budget: `>= ${RATIO_BUDGET}`,
      value: ratio.median,
      unit: 'x',
      pass: decided && ratio.median >= RATIO_BUDGET,
      detail: `${CONNECTIONS} connections: public ${publicRps} req/s, fast path ${fastRps} req/s; per repetition ${ratio.runs.join(', ')}; ${checkNote}`,
    },
    {
      what: 'added p50 latency, one connection (fast path)',
      budget: `<= ${ADDED_P50_BUDGET_US} us`,
      value: round(added.median),
      unit: 'us',
      pass: decided && added.median <= ADDED_P50_BUDGET_US,
      detail: `public p50 ${publicP50} us, fast path p50 ${fastP50} us; per repetition ${added.runs.join(', ')} us`,
    },
    ...slowRows,
  ];
}
