import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import type { CryptoKey, JWK, JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import type { KoaContext } from 'oidc-provider';
import { grantAll, interaction, page } from './test-idp-interaction.js';
import { TestIdpStore } from './test-idp-store.js';

/** One OIDC client the test IdP knows. */
export interface TestIdpClient {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUris: readonly string[];
  readonly postLogoutRedirectUris?: readonly string[];
  /** Default client_secret_basic. */
  readonly tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post';
}

/** One user who can sign in at the login form; `username` is also the `sub`. */
export interface TestIdpAccount {
  readonly username: string;
  readonly password: string;
  readonly email?: string;
  readonly name?: string;
  readonly groups?: readonly string[];
  /** More claims, released with the `profile` scope. */
  readonly claims?: Readonly<Record<string, unknown>>;
}

/** Token lifetimes in seconds (oidc-provider's `ttl`); short ones make refresh testable. */
export interface TestIdpTtls {
  readonly accessToken?: number;
  readonly idToken?: number;
  readonly refreshToken?: number;
}

export interface TestIdpOptions {
  readonly clients?: readonly TestIdpClient[];
  /** Added to the default account (alice / alice-password). */
  readonly accounts?: readonly TestIdpAccount[];
  readonly ttl?: TestIdpTtls;
  /** Rotate refresh tokens on every refresh grant. Default: oidc-provider's rule (at 70% of life). */
  readonly rotateRefreshTokens?: boolean;
  /** Host name in the issuer URL (the server always listens on 127.0.0.1). Default 127.0.0.1. */
  readonly hostname?: string;
  /** Default 0 (the kernel picks). */
  readonly port?: number;
}

/** How the token endpoint spoils the ID tokens it returns (every grant), for negative tests. */
export type IdTokenTamper =
  | 'none'
  | 'wrong-issuer'
  | 'bad-nonce'
  | 'unsigned'
  | 'expired'
  | 'bad-signature'
  | 'unknown-kid';

/** Calls the IdP has answered since it started (a snapshot). */
export interface TestIdpCounts {
  /** Successful token-endpoint grants by grant_type. */
  readonly grants: Readonly<Record<string, number>>;
  /** Failed token-endpoint requests by grant_type. */
  readonly grantErrors: Readonly<Record<string, number>>;
  /** Requests to the end-session endpoint (the RP-initiated logout entry, not its confirm step). */
  readonly endSession: number;
  /** Completed RP-initiated logouts (the user confirmed). */
  readonly endSessionSuccess: number;
  /** Requests to the revocation endpoint. */
  readonly revocation: number;
  readonly authorization: number;
  readonly discovery: number;
  readonly jwks: number;
  readonly userinfo: number;
}

export interface TestIdp {
  /** `http://<hostname>:<port>`, no trailing slash. */
  readonly issuer: string;
  readonly port: number;
  /** The default account's credentials. */
  readonly user: { readonly username: 'alice'; readonly password: 'alice-password' };
  counts(): TestIdpCounts;
  /** Registers (or replaces) a client while running. */
  addClient(client: TestIdpClient): void;
  /** Stops listening and drops open connections: connections are refused until `up()`. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  /** Delays every request by `ms` before answering (0: back to normal). */
  slow(ms: number): void;
  /** Spoils every ID token the token endpoint returns from now on ('none': stop). */
  tamperIdTokens(mode: IdTokenTamper): void;
  /**
   * From now on a submitted login form ends the authorization with this OAuth error (the IdP
   * redirects back to the client with `error`, `error_description` and `state`), as when a user
   * denies consent; undefined: logins work again.
   */
  denyLogins(error: string | undefined): void;
  /** Revokes every refresh token of `username`; returns how many it revoked. */
  revokeRefreshTokens(username: string): number;
  /** Internal errors oidc-provider reported (a passing test expects none). */
  serverErrors(): readonly string[];
  close(): Promise<void>;
}

/** The default account every test IdP has. */
export const ALICE: TestIdpAccount = {
  username: 'alice',
  password: 'alice-password',
  email: 'alice@example.com',
  name: 'Alice Example',
  groups: ['admins', 'staff'],
};

const ROUTES = {
  authorization: '/auth',
  token: '/token',
  jwks: '/jwks',
  userinfo: '/me',
  revocation: '/token/revocation',
  end_session: '/session/end',
} as const;
const DISCOVERY = '/.well-known/openid-configuration';
const INTERACTION = /^\/interaction\/([\w-]+)(\/login)?$/;

interface SigningKey {
  readonly privateKey: CryptoKey;
  readonly jwk: JWK & { kid: string };
}

async function signingKey(): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { privateKey, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } };
}

function clientMetadata(client: TestIdpClient): Record<string, unknown> & { client_id: string } {
  return {
    client_id: client.clientId,
    client_secret: client.clientSecret,
    redirect_uris: [...client.redirectUris],
    post_logout_redirect_uris: [...(client.postLogoutRedirectUris ?? [])],
    token_endpoint_auth_method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  };
}

/** Re-signs (or un-signs) an ID token the way `mode` says, with the IdP's own key unless the point is a wrong one. */
async function tamper(idToken: string, mode: IdTokenTamper, key: SigningKey): Promise<string> {
  const claims = decodeJwt(idToken);
  const now = Math.floor(Date.now() / 1000);
  const sign = async (payload: JWTPayload, with_: SigningKey = key): Promise<string> =>
    new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: with_.jwk.kid }).sign(with_.privateKey);
  switch (mode) {
    case 'none':
      return idToken;
    case 'wrong-issuer':
      return sign({ ...claims, iss: 'http://wrong-issuer.invalid' });
    case 'bad-nonce':
      return sign({ ...claims, nonce: 'not-the-nonce-that-was-sent' });
    case 'expired':
      return sign({ ...claims, iat: now - 7200, exp: now - 3600 });
    case 'unsigned':
      return new UnsecuredJWT(claims).encode();
    case 'bad-signature': {
      const other = await signingKey();
      return sign(claims, { ...other, jwk: { ...other.jwk, kid: key.jwk.kid } });
    }
    case 'unknown-kid':
      return sign(claims, await signingKey());
  }
}

function providerConfiguration(
  options: TestIdpOptions,
  accounts: ReadonlyMap<string, TestIdpAccount>,
  store: TestIdpStore,
  key: SigningKey,
): Record<string, unknown> {
  const extraClaims = [...accounts.values()].flatMap((a) => Object.keys(a.claims ?? {}));
  const ttl = options.ttl ?? {};
  return {
    adapter: store.adapterFor,
    jwks: { keys: [key.jwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    routes: ROUTES,
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'groups', ...extraClaims],
      groups: ['groups'],
    },
    conformIdTokenClaims: false,
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      if (account === undefined) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          email_verified: account.email !== undefined,
          name: account.name,
          groups: account.groups === undefined ? undefined : [...account.groups],
          ...account.claims,
        }),
      };
    },
    interactions: { url: (_ctx: unknown, i: { uid: string }) => `/interaction/${i.uid}` },
    loadExistingGrant: async (ctx: KoaContext) => {
      const oidc = ctx.oidc;
      const accountId = oidc?.session?.accountId;
      const clientId = oidc?.client?.clientId;
      if (oidc === undefined || accountId === undefined || clientId === undefined) return undefined;
      const scope = typeof oidc.params?.['scope'] === 'string' ? oidc.params['scope'] : 'openid';
      return oidc.provider.Grant.find(await grantAll(oidc.provider, accountId, clientId, scope));
    },
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(t: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    ...(options.rotateRefreshTokens === undefined
      ? {}
      : { rotateRefreshToken: () => options.rotateRefreshTokens }),
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true, allowedPolicy: async () => true },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (ctx: KoaContext, form: string) => {
          ctx.type = 'html';
          ctx.body = page(
            'Sign out of the test IdP?',
            `${form}<button type="submit" form="op.logoutForm" name="logout" value="yes">Yes, sign me out</button>`,
          );
        },
        postLogoutSuccessSource: async (ctx: KoaContext) => {
          ctx.type = 'html';
          ctx.body = page('Signed out of the test IdP', '<p>You are signed out.</p>');
        },
      },
    },
    renderError: async (ctx: KoaContext, out: Record<string, unknown>) => {
      ctx.type = 'text';
      ctx.body = `test IdP error: ${String(out['error'])}: ${String(out['error_description'] ?? '')}`;
    },
    ttl: {
      AccessToken: ttl.accessToken ?? 3600,
      IdToken: ttl.idToken ?? 3600,
      RefreshToken: ttl.refreshToken ?? 86_400,
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 86_400,
      Grant: 86_400,
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Starts a real OpenID Connect provider (oidc-provider@9) on 127.0.0.1 with an http issuer, for
 * tests and nothing else: a login form that checks passwords (ALICE by default), automatic
 * consent, PKCE required, refresh tokens for every client allowed the refresh_token grant,
 * revocation, RP-initiated logout, short TTLs on demand, call counters, and knobs that make it
 * misbehave (down, slow, spoiled ID tokens, revoked refresh tokens). Pages use no external assets.
 */
export async function startTestIdp(options: TestIdpOptions = {}): Promise<TestIdp> {
  const accounts = new Map<string, TestIdpAccount>([[ALICE.username, ALICE]]);
  for (const account of options.accounts ?? []) accounts.set(account.username, account);
  const store = new TestIdpStore();
  for (const client of options.clients ?? []) store.putClient(clientMetadata(client));
  const key = await signingKey();
  const stopped = new AbortController();
  const requests = new Map<string, number>();
  const grants: Record<string, number> = {};
  const grantErrors: Record<string, number> = {};
  const serverErrors: string[] = [];
  let endSessionSuccess = 0;
  let slowMs = 0;
  let tamperMode: IdTokenTamper = 'none';
  let denyError: string | undefined;

  const server = createServer();
  const port = await listen(server, options.port ?? 0);
  const issuer = `http://${options.hostname ?? '127.0.0.1'}:${port}`;
  const provider = new Provider(issuer, providerConfiguration(options, accounts, store, key));
  const grantType = (ctx: KoaContext): string => String(ctx.oidc?.params?.['grant_type'] ?? 'unknown');
  provider.on('grant.success', (ctx) => (grants[grantType(ctx)] = (grants[grantType(ctx)] ?? 0) + 1));
  provider.on('grant.error', (ctx) => (grantErrors[grantType(ctx)] = (grantErrors[grantType(ctx)] ?? 0) + 1));
  provider.on('end_session.success', () => (endSessionSuccess += 1));
  provider.on('server_error', (_ctx, err) => serverErrors.push(String(err)));
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (ctx.path === ROUTES.token && tamperMode !== 'none' && typeof body?.id_token === 'string')
      ctx.body = { ...body, id_token: await tamper(body.id_token, tamperMode, key) };
  });
  const oidc = provider.callback();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    requests.set(path, (requests.get(path) ?? 0) + 1);
    // No keep-alive: after down()/up() no client may hold a pooled socket to the old listener.
    res.setHeader('connection', 'close');
    const answer = async (): Promise<void> => {
      if (slowMs > 0) await delay(slowMs, undefined, { signal: stopped.signal });
      if (denyError !== undefined && req.method === 'POST' && INTERACTION.exec(path)?.[2] !== undefined) {
        const error_description = `the test IdP denies logins (${denyError})`;
        await provider.interactionFinished(req, res, { error: denyError, error_description });
      } else if (INTERACTION.test(path)) await interaction(provider, accounts, req, res);
      else oidc(req, res);
    };
    answer().catch((err: unknown) => {
      if (!stopped.signal.aborted) serverErrors.push(String(err));
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('test IdP failure');
    });
  });

  const down = async (): Promise<void> => {
    if (!server.listening) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  const count = (path: string): number => requests.get(path) ?? 0;
  return {
    issuer,
    port,
    user: { username: 'alice', password: 'alice-password' },
    counts: () => ({
      grants: { ...grants },
      grantErrors: { ...grantErrors },
      endSession: count(ROUTES.end_session),
      endSessionSuccess,
      revocation: count(ROUTES.revocation),
      authorization: count(ROUTES.authorization),
      discovery: count(DISCOVERY),
      jwks: count(ROUTES.jwks),
      userinfo: count(ROUTES.userinfo),
    }),
    addClient: (client) => store.putClient(clientMetadata(client)),
    down,
    up: async () => {
      if (!server.listening) await listen(server, port);
    },
    slow: (ms) => {
      slowMs = ms;
    },
    tamperIdTokens: (mode) => {
      tamperMode = mode;
    },
    denyLogins: (error) => {
      denyError = error;
    },
    revokeRefreshTokens: (username) => store.revokeRefreshTokens(username),
    serverErrors: () => [...serverErrors],
    close: async () => {
      stopped.abort();
      await down();
    },
  };
}
