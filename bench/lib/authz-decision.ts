/**
 * The decision itself, in-process, with 10,000 routes and 100,000 sessions loaded: the benchmark
 * config (`authz-config.ts`) with `--routes` generated routes goes through the real pipeline
 * (parse -> translate -> IR), the authorizer is built as the runtime builds it, and a CheckRequest
 * as Envoy sends it (browser headers, session cookie, route id in the context extensions) is
 * decided `--iterations` times after a warm-up, cycling over `--distinct` sessions (each one's
 * assertion signed during the warm-up and cached, as in steady state). Timed per request:
 *
 *   decision   decoded AuthorizeRequest -> Decision (awaited: the assertion comes from the cache)
 *   check      CheckRequest bytes -> decode -> decide -> CheckResponse bytes (what the gRPC handler runs)
 *
 *   node --import tsx bench/lib/authz-decision.ts --routes=10000 --sessions=100000
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRouteContext } from '../../src/contract/authz.js';
import { createAuthorizer } from '../../src/authorize/authorizer.js';
import { buildAuthzState } from '../../src/authorize/authz-state.js';
import type { AuthorizeRequest, Decision } from '../../src/authorize/decision.js';
import { decodeCheckRequest, encodeCheckResponse } from '../../src/authorize/ext-authz/check-codec.js';
import { AssertionSigner } from '../../src/authorize/identity/assertion-cache.js';
import { deriveSigningKey } from '../../src/authorize/identity/signing-key.js';
import { SessionHandles } from '../../src/authorize/session-handle.js';
import { MemorySessionStore } from '../../src/databroker/memory-session-store.js';
import { AuthorizeService } from '../../src/runtime/authorize-service.js';
import { buildFromFile } from '../../src/runtime/build-pipeline.js';
import { systemCaFile } from '../../src/runtime/system-ca.js';
import { silentLogger } from '../../src/shared/logger.js';
import { messageType } from '../../src/xds/codec/proto-root.js';
import { numberArg, parseArgs, progress } from './child.js';
import { AUTHZ_HOST, BENCH_SHARED_SECRET, authzConfigYaml, benchSessionId } from './authz-config.js';
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

/** CheckRequest bytes as Envoy 1.40 sends them for a browser GET with the session cookie. */
function checkRequestBytes(routeId: string, cookie: string, index: number): Uint8Array {
  const type = messageType('envoy.service.auth.v3.CheckRequest');
  const headers: Record<string, string> = {
    ':authority': AUTHZ_HOST,
    ':method': 'GET',
    ':path': `/items/${index}?page=2`,
    ':scheme': 'http',
    'user-agent':
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'accept-language': 'en-US,en;q=0.5',
    'accept-encoding': 'gzip, deflate, br',
    cookie,
    'x-forwarded-proto': 'http',
    'x-request-id': `4010a39d-fc17-49bf-ad8e-${String(index).padStart(12, '0')}`,
  };
  const message = type.fromObject({
    attributes: {
      source: { address: { socket_address: { address: '127.0.0.1', port_value: 40000 + (index % 1000) } } },
      destination: { address: { socket_address: { address: '127.0.0.1', port_value: 8443 } } },
      request: {
        time: { seconds: 1_800_000_000, nanos: 0 },
        http: {
          id: String(index),
          method: 'GET',
          headers,
          path: headers[':path'],
          host: AUTHZ_HOST,
          scheme: 'http',
          protocol: 'HTTP/1.1',
        },
      },
      context_extensions: encodeRouteContext(routeId),
    },
  });
  return type.encode(message).finish();
}

async function main(): Promise<void> {
  const args = parseArgs();
  const routes = numberArg(args, 'routes', 10_000);
  const sessionCount = numberArg(args, 'sessions', 100_000);
  const iterations = numberArg(args, 'iterations', 200_000);
  const distinct = numberArg(args, 'distinct', 1000);
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-decision-'));
  const configPath = join(dir, 'config.yaml');
  writeFileSync(
    configPath,
    authzConfigYaml({
      address: '127.0.0.1:8443',
      grpcAddress: '127.0.0.1:5443',
      upstream: '127.0.0.1:9',
      extraRoutes: routes,
    }),
  );
  const sessions = new MemorySessionStore();
  const service = new AuthorizeService(sessions, silentLogger);
  const caFile = systemCaFile({});
  const built = buildFromFile(configPath, {}, (config) => ({
    systemCaFile: caFile,
    internal: service.internalFor(config),
  }));
  rmSync(dir, { recursive: true, force: true });
  if (!built.ok) throw new Error(`config: ${JSON.stringify(built.problems).slice(0, 500)}`);
  const state = buildAuthzState(built.ir);
  const routeId = [
    ...(built.ir.virtualHosts.find((vhost) => vhost.domains.includes(AUTHZ_HOST))?.routes ?? []),
  ][0]?.id;
  if (routeId === undefined) throw new Error('no authz route in the IR');
  const secret = Buffer.from(BENCH_SHARED_SECRET, 'base64');
  const handles = new SessionHandles(secret);
  const signer = new AssertionSigner(deriveSigningKey(secret), ['department']);
  const now = Date.now();
  for (let index = 0; index < sessionCount; index++) {
    await sessions.put({
      id: benchSessionId(index),
      userId: `user-${index}`,
      email: `user${index}@example.com`,
      name: `User ${index}`,
      groups: ['staff'],
      claims: { department: 'research', groups: ['staff'], email: `user${index}@example.com` },
      issuedAt: now,
      expiresAt: now + 3_600_000,
    });
  }
  const authorize = createAuthorizer({
    state: () => state,
    sessions: { get: (id) => sessions.getSync(id) },
    verifyHandle: (handle) => handles.verify(handle),
    signer: () => signer,
    logger: silentLogger,
  });
  // Spread over the store: session i * (sessions / distinct).
  const stride = Math.max(1, Math.floor(sessionCount / distinct));
  const bytes = Array.from({ length: distinct }, (_, i) =>
    checkRequestBytes(routeId, `theme=dark; _portcullis=${handles.issue(benchSessionId(i * stride))}`, i),
  );
  const requests: AuthorizeRequest[] = bytes.map((b) => decodeCheckRequest(b));
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
    encodeCheckResponse(await authorize(decodeCheckRequest(bytes[i % distinct] as Uint8Array)));
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
    const raw = bytes[i % distinct] as Uint8Array;
    start = performance.now();
    encodeCheckResponse(await authorize(decodeCheckRequest(raw)));
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
