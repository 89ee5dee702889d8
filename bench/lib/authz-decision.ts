/**
 * The decision itself, in-process, with 10,000 routes and 100,000 sessions loaded: the benchmark
 * config (`authz-config.ts`) with `--routes` generated routes goes through the real pipeline
 * (parse -> translate -> IR), the authorizer is built as the runtime builds it, and a CheckRequest
 * as Envoy sends it (browser headers, session cookie, route id in the context extensions) is
 * decided `--iterations` times after a warm-up, cycling over `--distinct` sessions (each one's
 * assertion signed during the warm-up and cached, as in steady state). Timed per request:
 *
 *   decision   decoded AuthorizeRequest -> Decision (awaited: the assertion comes from the cache)
 *   check      framed CheckRequest bytes -> read -> decide -> CheckResponse bytes (`answerCheck`, what
 *              the h2c Check server runs per request; awaited only when it returns a promise)
 *
 *   node --import tsx bench/lib/authz-decision.ts --routes=10000 --sessions=100000
 */
import type { AuthorizeRequest, Decision } from '../../src/authorize/decision.js';
import { answerCheck } from '../../src/authorize/ext-authz/check-call.js';
import { readCheckRequest } from '../../src/authorize/ext-authz/check-request-reader.js';
import { grpcFramed } from '../../src/authorize/ext-authz/h2c/grpc-reply.js';
import { silentLogger } from '../../src/shared/logger.js';
import { numberArg, parseArgs, progress } from './child.js';
import { buildAuthzFixture } from './authz-fixture.js';
import { writeResult } from './output.js';
import { round } from './stats.js';

/** Percentiles of per-request times, in microseconds. */
export interface Percentiles {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly meanUs: number;
}

/** What this child reports. */
export interface AuthzDecisionResult {
  readonly routes: number;
  readonly sessions: number;
  readonly iterations: number;
  readonly decision: Percentiles;
  readonly check: Percentiles;
  /** Every decision was an allow carrying the assertion. */
  readonly allAllowedWithAssertion: boolean;
}

function percentiles(samples: Float64Array): Percentiles {
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { p50Us: round(at(0.5) * 1000), p99Us: round(at(0.99) * 1000), meanUs: round(mean * 1000) };
}

async function main(): Promise<void> {
  const args = parseArgs();
  const routes = numberArg(args, 'routes', 10_000);
  const sessionCount = numberArg(args, 'sessions', 100_000);
  const iterations = numberArg(args, 'iterations', 200_000);
  const distinct = numberArg(args, 'distinct', 1000);
  const { state, sessions, authorize, bytes } = await buildAuthzFixture(routes, sessionCount, distinct);
  const requests: AuthorizeRequest[] = bytes.map((b) => readCheckRequest(b));
  const bodies = bytes.map((b) => grpcFramed(b));
  const answer = async (body: Buffer): Promise<void> => {
    const outcome = answerCheck(body, authorize, silentLogger);
    if (!Buffer.isBuffer(await outcome)) throw new Error('Check failed');
  };
  progress('authz-decision', `${state.routes.size} routes, ${sessions.size} sessions; warming up`);
  let allAllowed = true;
  const check = (decision: Decision): void => {
    if (
      decision.kind !== 'allow' ||
      !decision.setHeaders.some(([name]) => name === 'x-portcullis-jwt-assertion')
    )
      allAllowed = false;
  };
  for (let i = 0; i < Math.max(distinct * 3, 20_000); i++) {
    check(await authorize(requests[i % distinct] as AuthorizeRequest));
    await answer(bodies[i % distinct] as Buffer);
  }
  const decisionTimes = new Float64Array(iterations);
  const checkTimes = new Float64Array(iterations);
  // Interleaved so both see the same machine load.
  for (let i = 0; i < iterations; i++) {
    const request = requests[i % distinct] as AuthorizeRequest;
    let start = performance.now();
    const decision = await authorize(request);
    decisionTimes[i] = performance.now() - start;
    check(decision);
    const body = bodies[i % distinct] as Buffer;
    start = performance.now();
    const outcome = answerCheck(body, authorize, silentLogger);
    if (outcome instanceof Promise) await outcome;
    checkTimes[i] = performance.now() - start;
  }
  const result: AuthzDecisionResult = {
    routes: state.routes.size,
    sessions: sessions.size,
    iterations,
    decision: percentiles(decisionTimes),
    check: percentiles(checkTimes),
    allAllowedWithAssertion: allAllowed,
  };
  progress('authz-decision', JSON.stringify(result));
  writeResult(args, result);
}

await main();
