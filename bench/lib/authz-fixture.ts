/**
 * The decision benchmarks' shared setup: the benchmark config with `routes` generated routes goes
 * through the real pipeline (parse -> translate -> IR), `sessions` sessions are loaded, the
 * authorizer is built as the runtime builds it, and `distinct` CheckRequests as Envoy sends them
 * (browser headers, session cookie, route id in the context extensions) are encoded.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeRouteContext } from '../../src/contract/authz.js';
import { createAuthorizer } from '../../src/authorize/authorizer.js';
import { buildAuthzState, type AuthzState } from '../../src/authorize/authz-state.js';
import type { Authorizer } from '../../src/authorize/ext-authz/authorization-service.js';
import { AssertionSigner } from '../../src/authorize/identity/assertion-cache.js';
import { deriveSigningKey } from '../../src/authorize/identity/signing-key.js';
import { SessionHandles } from '../../src/session/handle.js';
import { MemorySessionStore } from '../../src/databroker/memory-session-store.js';
import { AuthorizeService } from '../../src/runtime/authorize-service.js';
import { buildFromFile } from '../../src/runtime/build-pipeline.js';
import { systemCaFile } from '../../src/runtime/system-ca.js';
import { silentLogger } from '../../src/shared/logger.js';
import { messageType } from '../../src/xds/codec/proto-root.js';
import {
  AUTHZ_HOST,
  BENCH_SHARED_SECRET,
  authzConfigYaml,
  benchSession,
  benchSessionId,
} from './authz-config.js';

/** What the decision benchmarks run against. */
export interface AuthzFixture {
  readonly state: AuthzState;
  readonly sessions: MemorySessionStore;
  readonly authorize: Authorizer;
  /** `distinct` encoded CheckRequests, each for a different session spread over the store. */
  readonly bytes: readonly Uint8Array[];
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

/** Builds the state, sessions, authorizer and CheckRequests (see the file comment). */
export async function buildAuthzFixture(
  routes: number,
  sessionCount: number,
  distinct: number,
): Promise<AuthzFixture> {
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
    await sessions.put(benchSession(index, now));
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
  return { state, sessions, authorize, bytes };
}
