import { createAuthorizer } from '../../src/authorize/authorizer.js';
import { buildAuthzState } from '../../src/authorize/authz-state.js';
import type { AuthorizeRequest, Decision } from '../../src/authorize/decision.js';
import { AssertionSigner } from '../../src/authorize/identity/assertion-cache.js';
import { deriveSigningKey } from '../../src/keys/signing-key.js';
import { SessionHandles } from '../../src/session/handle.js';
import type { RecordSessionStore } from '../../src/databroker/record-session-store.js';
import type { IR } from '../../src/ir/types.js';
import { silentLogger } from '../../src/shared/logger.js';
import { memorySessionStore } from './session-store.js';

/** The one protected route of the fixture (any signed-in user, identity headers on). */
export const FIXTURE_ROUTE = 'aaaaaaaaaaaaaaaa';
/** The identity-provider client of the fixture's route: sessions must carry it to count. */
export const FIXTURE_IDP = 'idp-fixture';
/** The fixture's authenticate host (every path of it is Portcullis's own). */
export const FIXTURE_AUTHENTICATE_URL = 'https://auth.test';

/** An authorizer over one protected route, with its session store and handle issuer, for Check-level tests. */
export interface AuthzFixture {
  readonly sessions: RecordSessionStore;
  readonly handles: SessionHandles;
  readonly authorize: (request: AuthorizeRequest) => Decision | Promise<Decision>;
}

/**
 * Builds the fixture without a config file or Envoy: a hand-written IR (route `FIXTURE_ROUTE` on
 * `app.test` for sessions of `FIXTURE_IDP`, claim header `X-Dept` from `department`, authenticate
 * host `auth.test`) compiled the way the runtime compiles it.
 */
export function authzFixture(
  secretByte: number,
  options: {
    /** `null`: sign-in not configured (no authenticate URL). */
    readonly authenticateUrl?: string | null;
    readonly issuerFormat?: 'host_only' | 'uri';
  } = {},
): AuthzFixture {
  const secret = Buffer.alloc(32, secretByte);
  const handles = new SessionHandles(secret);
  const sessions = memorySessionStore();
  const signer = new AssertionSigner(deriveSigningKey(secret), ['department']);
  const allowSignedIn = {
    action: 'allow',
    and: [],
    or: [{ kind: 'authenticated_user', path: 'p' }],
    not: [],
    nor: [],
    path: 'p',
  };
  const ir = {
    virtualHosts: [
      {
        name: 'app.test',
        domains: ['app.test'],
        routes: [
          {
            id: FIXTURE_ROUTE,
            public: false,
            passIdentityHeaders: true,
            policy: [allowSignedIn],
            idpId: FIXTURE_IDP,
          },
        ],
      },
    ],
    authorize: {
      claimHeaders: { 'X-Dept': 'department' },
      authenticateUrl:
        options.authenticateUrl === null ? undefined : (options.authenticateUrl ?? FIXTURE_AUTHENTICATE_URL),
      cookieName: '_portcullis',
      issuerFormat: options.issuerFormat ?? 'host_only',
    },
  } as unknown as IR;
  const state = buildAuthzState(ir);
  const authorize = createAuthorizer({
    state: () => state,
    // As the AuthorizeService wires it: the cache answers synchronously, the store otherwise.
    sessions: { get: (id) => sessions.getSync(id) ?? sessions.get(id) },
    verifyHandle: (handle) => handles.verify(handle),
    signer: () => signer,
    logger: silentLogger,
  });
  return { sessions, handles, authorize };
}
