import assert from 'node:assert/strict';
import { createAuthorizer } from '../../src/authorize/authorizer.js';
import { buildAuthzState } from '../../src/authorize/authz-state.js';
import type { AuthorizeRequest, Decision } from '../../src/authorize/decision.js';
import { DecisionMinter } from '../../src/authorize/fast-path/decision-minter.js';
import { AssertionSigner } from '../../src/authorize/identity/assertion-cache.js';
import { parseConfig } from '../../src/config/parse-config.js';
import type { RecordSessionStore } from '../../src/databroker/record-session-store.js';
import type { IR, IRInternal } from '../../src/ir/types.js';
import { buildKeyRing, type KeyRing } from '../../src/keys/key-ring.js';
import type { Session } from '../../src/session/session.js';
import { silentLogger } from '../../src/shared/logger.js';
import { translate } from '../../src/translate/translate.js';
import { memorySessionStore } from './session-store.js';
import { SIGN_IN } from './sign-in-config.js';
import { TEST_INTERNAL } from './internal-endpoints.js';

/**
 * Routes of the mint fixture by name, on app.test unless named otherwise. `any` and `team` pass
 * identity headers, `ada` (allowed_users) allows only Ada, `method` names http_method (never
 * replayed), `public` is public, `other` is on other.test.
 */
const ROUTES = {
  any: { prefix: '/any', allow_any_authenticated_user: true, pass_identity_headers: false },
  ada: { prefix: '/ada', allowed_users: ['ada@example.com'], pass_identity_headers: false },
  team: { prefix: '/team', allow_any_authenticated_user: true, pass_identity_headers: true },
  method: {
    prefix: '/method',
    policy: [{ allow: { and: [{ authenticated_user: true }, { http_method: { in: ['GET'] } }] } }],
  },
  public: { prefix: '/public', allow_public_unauthenticated_access: true },
} as const;

export type FixtureRoute = keyof typeof ROUTES | 'other';

/** Where Envoy would reach Portcullis: translate needs it for the fast path to be on. */
export const INTERNAL: IRInternal = { ...TEST_INTERNAL, authorizeTimeoutMs: 1000 };

/** The config's claim headers: sorted lower-case names x-a-team (c0), x-dept (c1), x-evil (c2). */
export const CLAIM_HEADERS = { 'X-Dept': 'department', 'X-A-Team': 'team', 'X-Evil': 'evil' };

/** The fixture's IR, translated from a real config (so decision names are the real ones). */
export function mintFixtureIr(
  options: { lifetime?: string; insecure?: boolean } = {},
  keys = mintFixtureKeys(),
): IR {
  const routes = [
    ...Object.values(ROUTES).map((route) => ({
      from: 'https://app.test',
      to: 'http://10.0.0.1:8080',
      ...route,
    })),
    { from: 'https://other.test', to: 'http://10.0.0.2:8080', allow_any_authenticated_user: true },
  ];
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      // Over TLS (a certificate derived from the test secret), or plain HTTP with `insecure`.
      ...(options.insecure === true
        ? { insecure_server: true, address: ':8080' }
        : { certificates: [certificateOf(keys)] }),
      decision_token_lifetime: options.lifetime ?? '2m',
      jwt_claims_headers: CLAIM_HEADERS,
      routes,
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir, problems } = translate(parsed.config, { systemCaFile: '/ca.pem', internal: INTERNAL });
  assert.ok(ir, JSON.stringify(problems));
  return ir;
}

function certificateOf(keys: KeyRing): { cert: string; key: string } {
  const certificate = keys.fallbackCertificate(['app.test', 'other.test']);
  return { cert: certificate.certPem, key: certificate.keyPem };
}

/** The route id of fixture route `name` in `ir`. */
export function routeIdOf(ir: IR, name: FixtureRoute): string {
  const host = name === 'other' ? 'other.test' : 'app.test';
  const prefix = name === 'other' ? '/' : ROUTES[name].prefix;
  const route = ir.virtualHosts
    .filter((vhost) => vhost.domains.includes(host))
    .flatMap((vhost) => vhost.routes)
    .find((candidate) => candidate.match.value === prefix);
  assert.ok(route, name);
  return route.id;
}

/** The decision name of fixture route `name` in `ir` (undefined: not replayable). */
export function decisionNameOf(ir: IR, name: FixtureRoute): string | undefined {
  const id = routeIdOf(ir, name);
  return ir.virtualHosts.flatMap((vhost) => vhost.routes).find((route) => route.id === id)?.decisionName;
}

/** The fixture's key ring, derived from a fixed test secret. */
export function mintFixtureKeys(): KeyRing {
  return buildKeyRing({
    sharedSecret: Buffer.alloc(32, 0x31),
    cookieSecret: Buffer.alloc(32, 0x32),
    generated: { sharedSecret: false, cookieSecret: false },
    signingKeyPems: undefined,
    tlsDerive: undefined,
    idpClientSecrets: new Map(),
    metricsBasicAuth: undefined,
    databrokerConnection: undefined,
  });
}

/** An authorizer with a decision minter over the fixture, on a clock the test moves. */
export interface MintFixture {
  readonly ir: IR;
  readonly keys: KeyRing;
  readonly sessions: RecordSessionStore;
  readonly minter: DecisionMinter;
  readonly clock: { now: number };
  /** Revocations by decision sid, read by the authorizer's `revokedUntil`. */
  readonly revoked: Map<string, number>;
  readonly authorize: (request: AuthorizeRequest) => Decision | Promise<Decision>;
  /** A session of the fixture's identity provider, stored, ending in an hour unless overridden. */
  addSession(id: string, overrides?: Partial<Session>): Promise<Session>;
  /** A browser request for `route` with the session cookie of `sessionId` (and `headers`). */
  ask(route: FixtureRoute, sessionId: string | undefined, headers?: Record<string, string>): AuthorizeRequest;
}

/** Builds the fixture; `lifetime` is `decision_token_lifetime` (default 2m). */
export function mintFixture(options: { lifetime?: string; insecure?: boolean } = {}): MintFixture {
  const keys = mintFixtureKeys();
  const ir = mintFixtureIr(options, keys);
  const state = buildAuthzState(ir);
  // A whole second, so Max-Age and exp read as round numbers.
  const clock = { now: Math.floor(Date.now() / 1000) * 1000 };
  const now = (): number => clock.now;
  const sessions = memorySessionStore();
  const signer = new AssertionSigner(keys.signingKey, Object.values(CLAIM_HEADERS), undefined, now);
  const minter = new DecisionMinter(() => keys.decisionKey, now);
  const revoked = new Map<string, number>();
  const idpId = ir.virtualHosts[0]?.routes[0]?.idpId ?? '';
  const authorize = createAuthorizer({
    state: () => state,
    sessions: { get: (id) => sessions.getSync(id) ?? sessions.get(id) },
    verifyHandle: (handle) => keys.handles.verify(handle),
    signer: () => signer,
    logger: silentLogger,
    now,
    decisions: minter,
    revokedUntil: (sid) => revoked.get(sid),
  });
  return {
    ir,
    keys,
    sessions,
    minter,
    clock,
    revoked,
    authorize,
    async addSession(id, overrides = {}) {
      const session: Session = {
        id,
        userId: id,
        email: `${id}@example.com`,
        emailVerified: true,
        name: id,
        groups: ['g1'],
        claims: { department: 'eng', team: ['red', 'blue'], evil: 'x\r\nX-Admin: 1' },
        issuedAt: clock.now,
        expiresAt: clock.now + 3_600_000,
        idpId,
        ...overrides,
      };
      await sessions.put(session);
      return session;
    },
    ask(route, sessionId, headers = {}) {
      const routePrefix = route === 'other' ? '/' : ROUTES[route].prefix;
      return {
        routeId: routeIdOf(ir, route),
        requestId: 'r',
        method: 'GET',
        scheme: 'https',
        host: route === 'other' ? 'other.test' : 'app.test',
        path: `${routePrefix}/page`,
        query: '',
        headers: {
          accept: 'text/html',
          ...(sessionId === undefined
            ? {}
            : { cookie: `theme=dark; _portcullis=${keys.handles.issue(sessionId)}` }),
          ...headers,
        },
        sourceIp: '10.0.0.1',
      };
    },
  };
}
