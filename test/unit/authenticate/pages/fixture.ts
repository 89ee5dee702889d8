// A HandlerContext for the page handlers without sockets: a memory store, real handles and
// sealed tokens, a fake clock and a fake ProviderClient that records what it is asked.
import { randomBytes } from 'node:crypto';
import { sealTokens } from '../../../../src/session/session-tokens.js';
import type { HandlerContext, OwnRequest } from '../../../../src/authenticate/http/types.js';
import type {
  AuthenticateSettings,
  ProviderClient,
  ProviderConfig,
} from '../../../../src/authenticate/types.js';
import { memorySessionStore } from '../../../support/session-store.js';
import type { IR } from '../../../../src/ir/types.js';
import { SessionHandles } from '../../../../src/session/handle.js';
import type { Session } from '../../../../src/session/session.js';
import { recordingLogger } from '../../../../src/shared/logger.js';
import { NO_TELEMETRY } from '../../../../src/contract/telemetry.js';

export const IDP_ID = 'a1b2c3d4e5f60718';
export const START = Date.UTC(2026, 10, 25, 12, 0, 0);

/** What the fake provider does and what it was asked. */
export interface FakeProvider extends ProviderClient {
  readonly revoked: [string, string][];
  readonly endSessionCalls: [string | undefined, string][];
}

/** A ProviderClient whose revoke and end-session behaviour the test chooses. */
export function fakeProvider(options: {
  endSession?: string | undefined;
  revoke?: () => Promise<void>;
  endSessionUrl?: () => Promise<URL | undefined>;
}): FakeProvider {
  const revoked: [string, string][] = [];
  const endSessionCalls: [string | undefined, string][] = [];
  const config: ProviderConfig = {
    id: IDP_ID,
    provider: 'oidc',
    providerUrl: new URL('https://idp.test'),
    clientId: 'client',
    clientSecret: 'secret',
    scopes: undefined,
    requestParams: {},
  };
  return {
    config,
    formPost: false,
    revoked,
    endSessionCalls,
    authorizationUrl: () => Promise.reject(new Error('not used')),
    exchangeCode: () => Promise.reject(new Error('not used')),
    refresh: () => Promise.reject(new Error('not used')),
    revoke: (token, hint) => {
      revoked.push([token, hint]);
      return options.revoke?.() ?? Promise.resolve();
    },
    endSessionUrl: (idToken, postLogout) => {
      endSessionCalls.push([idToken, postLogout]);
      if (options.endSessionUrl !== undefined) return options.endSessionUrl();
      if (options.endSession === undefined) return Promise.resolve(undefined);
      const url = new URL(options.endSession);
      if (idToken !== undefined) url.searchParams.set('id_token_hint', idToken);
      url.searchParams.set('post_logout_redirect_uri', postLogout);
      return Promise.resolve(url);
    },
  };
}

/** A context over a fresh store; `provider` answers for IDP_ID; `providers` are the settings' configs. */
export function fixture(
  options: {
    provider?: ProviderClient;
    signoutRedirectUrl?: string;
    providers?: ReadonlyMap<string, ProviderConfig>;
  } = {},
) {
  let clock = START;
  const sharedSecret = new Uint8Array(randomBytes(32));
  const settings: AuthenticateSettings = {
    authenticateUrl: new URL('https://auth.example.com:8443'),
    callbackPath: '/oauth2/callback',
    cookie: {
      name: '_portcullis',
      domain: 'example.com',
      expireMs: 14 * 3600_000,
      httpOnly: true,
      sameSite: 'lax',
      secure: true,
    },
    cookieSecret: new Uint8Array(randomBytes(32)),
    sharedSecret,
    programmaticRedirectDomains: ['localhost'],
    signoutRedirectUrl:
      options.signoutRedirectUrl === undefined ? undefined : new URL(options.signoutRedirectUrl),
    providers: options.providers ?? new Map(),
  };
  const sessions = memorySessionStore({ now: () => clock });
  const handles = new SessionHandles(sharedSecret);
  const logger = recordingLogger();
  const context: HandlerContext = {
    settings: () => settings,
    routes: () => ({ locate: () => undefined, serves: () => false }),
    ir: () => ({}) as IR,
    provider: (idpId) => (idpId === IDP_ID ? options.provider : undefined),
    sessions,
    handles,
    replay: { claim: () => Promise.resolve(true) },
    now: () => clock,
    randomId: () => 'random-id',
    logger,
    telemetry: NO_TELEMETRY,
  };
  return {
    context,
    sessions,
    handles,
    logger,
    sharedSecret,
    advance: (ms: number) => void (clock += ms),
  };
}

/** A session with sealed tokens (refresh token optional), stored. */
export async function storeSession(
  f: ReturnType<typeof fixture>,
  overrides: Partial<Session> = {},
  tokens: { refreshToken?: string; accessToken?: string } = { refreshToken: 'rt-1', accessToken: 'at-1' },
): Promise<Session> {
  const id = overrides.id ?? 'session-1';
  const session: Session = {
    id,
    userId: 'user-1',
    email: 'ada@example.com',
    emailVerified: true,
    name: 'Ada',
    groups: ['admins'],
    claims: { sub: 'user-1', email: 'ada@example.com' },
    issuedAt: START,
    expiresAt: START + 14 * 3600_000,
    idpId: IDP_ID,
    tokens: await sealTokens(f.sharedSecret, id, {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      idToken: 'id-token-1',
      accessTokenExpiresAt: START + 3600_000,
      idTokenExpiresAt: START + 3600_000,
    }),
    ...overrides,
  };
  await f.sessions.put(session);
  return session;
}

/** An OwnRequest; `handle` is the session handle it carries. */
export function request(options: {
  method?: string;
  url?: string;
  handle?: string;
  form?: Record<string, string>;
  onAuthenticateHost?: boolean;
}): OwnRequest {
  return {
    method: options.method ?? 'GET',
    url: new URL(options.url ?? 'https://app.example.com:8443/.portcullis/sign_out'),
    headers: {},
    cookies: {},
    form: options.form === undefined ? undefined : new URLSearchParams(options.form),
    sessionHandle: options.handle,
    requestId: 'req-123',
    onAuthenticateHost: options.onAuthenticateHost ?? false,
  };
}

/** The Set-Cookie that clears the session cookie, as every sign-out answer must carry. */
export function assertClearsCookie(setCookies: readonly string[]): void {
  const clear = setCookies.find((value) => value.startsWith('_portcullis='));
  if (clear === undefined) throw new Error(`no session cookie cleared in ${JSON.stringify(setCookies)}`);
  for (const part of [
    '_portcullis=;',
    'Max-Age=0',
    'Domain=example.com',
    'Path=/',
    'HttpOnly',
    'Secure',
    'SameSite=Lax',
  ]) {
    if (!clear.includes(part)) throw new Error(`${clear} lacks ${part}`);
  }
}
