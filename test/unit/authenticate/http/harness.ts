// A HandlerContext for the sign-in handlers without sockets or an IdP: a fake clock, the memory
// session store, real handles and replay guard, and a fake ProviderClient that records its calls.
import { randomBytes, randomUUID } from 'node:crypto';
import { parseSetCookie } from 'cookie';
import { RecordReplayGuard } from '../../../../src/authenticate/flow/replay-guard.js';
import { MemoryBackend } from '../../../../src/databroker/memory-backend.js';
import type { HandlerContext, OwnRequest, OwnResponse } from '../../../../src/authenticate/http/types.js';
import { createRouteLocator } from '../../../../src/authenticate/route-locator.js';
import {
  IdpError,
  type AuthenticateSettings,
  type FlowChecks,
  type ProviderClient,
  type SignInResult,
} from '../../../../src/authenticate/types.js';
import { memorySessionStore } from '../../../support/session-store.js';
import type { IR } from '../../../../src/ir/types.js';
import { SessionHandles } from '../../../../src/session/handle.js';
import { recordingLogger } from '../../../../src/shared/logger.js';
import { NO_TELEMETRY } from '../../../../src/contract/telemetry.js';

export const AUTH_URL = 'https://auth.test';
export const IDP_A = 'idp-a';
export const IDP_B = 'idp-b';
export const CALLBACK_PATH = '/oauth2/callback';

/**
 * Two route hosts: app.test (IdP A; `from` names port 8443) and other.test (IdP B), on a TLS
 * listener on 443: Portcullis serves https://app.test, https://app.test:8443 and https://other.test.
 */
export const TEST_IR = {
  listener: { port: 443, tls: { certificates: [] } },
  virtualHosts: [
    {
      name: 'app.test',
      domains: ['app.test'],
      routes: [{ id: 'route-app', match: { kind: 'prefix', value: '/' }, idpId: IDP_A, fromPort: 8443 }],
    },
    {
      name: 'other.test',
      domains: ['other.test'],
      routes: [{ id: 'route-other', match: { kind: 'prefix', value: '/' }, idpId: IDP_B }],
    },
  ],
  authorize: {
    authenticateUrl: AUTH_URL,
    claimHeaders: {},
    cookieName: '_portcullis',
    issuerFormat: 'host_only',
  },
} as unknown as IR;

/** A ProviderClient that accepts code `good-code` with the checks it handed out, and records calls. */
export class FakeProvider implements ProviderClient {
  readonly config;
  readonly issued: FlowChecks[] = [];
  readonly exchanges: { callback: URL; redirectUri: string; checks: FlowChecks }[] = [];
  /** Set to make the next calls fail. */
  failAuthorization: Error | undefined;
  failExchange: Error | undefined;
  claims: Record<string, unknown> = {
    sub: 'alice',
    email: 'alice@example.com',
    name: 'Alice Example',
    groups: ['admins', 7, 'staff'],
  };

  constructor(
    readonly id: string,
    readonly formPost = false,
  ) {
    this.config = {
      id,
      provider: 'oidc' as const,
      providerUrl: new URL('https://idp.test'),
      clientId: 'client',
      clientSecret: 'secret',
      scopes: undefined,
      requestParams: {},
    };
  }

  async authorizationUrl(redirectUri: string, checks: FlowChecks): Promise<URL> {
    if (this.failAuthorization !== undefined) throw this.failAuthorization;
    this.issued.push(checks);
    const url = new URL('https://idp.test/authorize');
    url.searchParams.set('redirect_uri', redirectUri);
    url.searchParams.set('state', checks.state);
    url.searchParams.set('nonce', checks.nonce);
    return url;
  }

  async exchangeCode(callback: URL, redirectUri: string, checks: FlowChecks): Promise<SignInResult> {
    this.exchanges.push({ callback, redirectUri, checks });
    if (this.failExchange !== undefined) throw this.failExchange;
    const issued = this.issued.find((one) => one.state === checks.state);
    if (callback.searchParams.get('code') !== 'good-code' || issued === undefined)
      throw new IdpError('refused', 'invalid_grant');
    if (issued.nonce !== checks.nonce || issued.codeVerifier !== checks.codeVerifier)
      throw new IdpError('refused', 'checks differ');
    return {
      userId: 'alice',
      claims: this.claims,
      emailVerified: true,
      accessToken: 'access',
      refreshToken: 'refresh',
      idToken: 'id-token',
      accessTokenExpiresAt: undefined,
      idTokenExpiresAt: undefined,
    };
  }

  async refresh(): Promise<SignInResult> {
    throw new IdpError('unavailable', 'not in this fake');
  }

  async revoke(): Promise<void> {}

  async endSessionUrl(): Promise<URL | undefined> {
    return undefined;
  }
}

export interface Harness {
  readonly context: HandlerContext;
  readonly clock: { now: number };
  readonly sessions: ReturnType<typeof memorySessionStore>;
  readonly handles: SessionHandles;
  readonly providers: Map<string, FakeProvider>;
  readonly settings: AuthenticateSettings;
  readonly logger: ReturnType<typeof recordingLogger>;
}

/** A fresh harness; `settings` overrides parts of the authenticate settings. */
export function harness(settings: Partial<AuthenticateSettings> = {}): Harness {
  const clock = { now: Date.UTC(2026, 0, 1, 12) };
  const now = (): number => clock.now;
  const sharedSecret = new Uint8Array(randomBytes(32));
  const handles = new SessionHandles(sharedSecret);
  const sessions = memorySessionStore({ now });
  const providers = new Map([
    [IDP_A, new FakeProvider(IDP_A)],
    [IDP_B, new FakeProvider(IDP_B)],
  ]);
  const full: AuthenticateSettings = {
    authenticateUrl: new URL(AUTH_URL),
    callbackPath: CALLBACK_PATH,
    cookie: {
      name: '_portcullis',
      domain: undefined,
      expireMs: 14 * 3_600_000,
      httpOnly: true,
      sameSite: 'lax',
      secure: true,
    },
    cookieSecret: new Uint8Array(randomBytes(32)),
    sharedSecret,
    programmaticRedirectDomains: ['localhost'],
    signoutRedirectUrl: undefined,
    providers: new Map(),
    ...settings,
  };
  const locator = createRouteLocator(TEST_IR);
  const logger = recordingLogger();
  const context: HandlerContext = {
    settings: () => full,
    routes: () => locator,
    ir: () => TEST_IR,
    provider: (id) => providers.get(id),
    sessions,
    handles,
    replay: new RecordReplayGuard(new MemoryBackend({ now }), now),
    now,
    randomId: () => randomUUID(),
    logger,
    telemetry: NO_TELEMETRY,
  };
  return { context, clock, sessions, handles, providers, settings: full, logger };
}

/** An OwnRequest for `url` as the server would decode it. */
export function ownRequest(
  url: string,
  init: {
    method?: string;
    cookies?: Record<string, string>;
    form?: URLSearchParams;
    sessionHandle?: string;
  } = {},
): OwnRequest {
  const parsed = new URL(url);
  return {
    method: init.method ?? 'GET',
    url: parsed,
    headers: {},
    cookies: init.cookies ?? {},
    form: init.form,
    sessionHandle: init.sessionHandle,
    requestId: 'req-1',
    onAuthenticateHost: parsed.hostname === new URL(AUTH_URL).hostname,
  };
}

/** The Set-Cookie values of a response by cookie name. */
export function setCookies(response: OwnResponse): Map<string, ReturnType<typeof parseSetCookie>> {
  return new Map(response.setCookies.map((value) => [parseSetCookie(value).name, parseSetCookie(value)]));
}

/** The Location header of a redirect. */
export function location(response: OwnResponse): URL {
  const value = response.headers.find(([name]) => name.toLowerCase() === 'location')?.[1];
  if (value === undefined)
    throw new Error(`no Location (status ${response.status}): ${response.body.slice(0, 300)}`);
  return new URL(value);
}
