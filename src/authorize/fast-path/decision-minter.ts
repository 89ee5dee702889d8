import { decisionSessionId } from '../../contract/fast-path.js';
import type { SigningKey } from '../../keys/signing-key.js';
import type { Session } from '../../session/session.js';
import type { AuthzState, FastPathSettings, RouteAuthz, RouteDecision } from '../authz-state.js';
import type { AuthorizeRequest } from '../decision.js';
import type { AssertionSigner } from '../identity/assertion-cache.js';
import { claimValues } from '../policy/claims.js';
import type { AssertionTarget } from '../request-host.js';
import { allowedRoutes } from './allowed-routes.js';
import { decisionSetCookie } from './decision-cookie.js';
import { mintDecisionToken } from './decision-token.js';

/** Bound on cached tokens; past it the cache starts over (cheap, and rare in practice). */
const MAX_ENTRIES = 200_000;

/**
 * When the decision token of a session was revoked: Envoy refuses its tokens minted at or before
 * the returned Unix ms; undefined when it was not.
 */
export type RevokedUntil = (decisionSid: string) => number | undefined;

/** One allow that may hand out a decision token: what it was decided on. */
export interface MintInput {
  /** The state the allow was decided on: a token is reused only under the same one. */
  readonly state: AuthzState;
  readonly fastPath: FastPathSettings;
  readonly route: RouteAuthz;
  readonly decision: RouteDecision;
  readonly request: AuthorizeRequest;
  /** The session that allowed it (from the session cookie, of the route's identity provider). */
  readonly session: Session;
  /** The signer the slow path takes the assertion from, and the assertion's issuer and audience. */
  readonly signer: AssertionSigner;
  readonly target: AssertionTarget;
  readonly revokedUntil: RevokedUntil | undefined;
}

/** A token minted for one session and host, while it may be handed out again. */
interface Entry {
  readonly state: AuthzState;
  readonly sid: string;
  readonly token: string;
  readonly routes: ReadonlySet<string>;
  readonly mintedMs: number;
  readonly expiresMs: number;
  /** Handed out again until then: the middle of its life. */
  readonly reuseUntil: number;
  /** The last Set-Cookie built for it and its Max-Age (rebuilt when the second changes). */
  cookie: { readonly maxAgeS: number; readonly value: string } | undefined;
}

/**
 * Mints decision tokens on slow-path allows (docs/fast-path.md) and reuses each one while more
 * than half of its life remains, under the same installed state: signing costs far more than the
 * rest of a decision, and a client that never sends the cookie back (a benchmark, a script with a
 * fixed Cookie header) asks the slow path on every request. Entries are per session, assertion
 * issuer and host; a session's entries go when it is invalidated, and all of them when a config
 * is installed. State of the one service that holds it, never shared between instances.
 */
export class DecisionMinter {
  private readonly entries = new Map<string, Entry>();
  private readonly bySession = new Map<string, Set<string>>();
  /** Bumped by every invalidation, so a mint that was signing meanwhile is not cached. */
  private epoch = 0;

  constructor(
    private readonly key: () => SigningKey,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The Set-Cookie carrying a decision token for this allow, or undefined when none is handed
   * out: the session's tokens are revoked until later than now (Envoy would refuse a new one),
   * the token would not fit, or it would expire at once. A reusable cached token answers
   * synchronously (no promise hop on the common path); only a mint waits for signing.
   */
  setCookieFor(input: MintInput): string | undefined | Promise<string | undefined> {
    const now = this.now();
    const cacheKey = `${input.session.id}\n${input.target.issuer}\n${input.target.audience}`;
    const cached = this.entries.get(cacheKey);
    let sid = cached?.sid;
    let revokedAt: number | undefined;
    if (input.revokedUntil !== undefined) {
      sid ??= decisionSessionId(input.session.id);
      revokedAt = input.revokedUntil(sid);
      if (revokedAt !== undefined && now <= revokedAt) return undefined;
    }
    if (
      cached !== undefined &&
      cached.state === input.state &&
      now < cached.reuseUntil &&
      cached.routes.has(input.decision.name) &&
      (revokedAt === undefined || cached.mintedMs > revokedAt)
    )
      return cookieOf(cached, input.fastPath, now);
    return this.mint(input, cacheKey, sid ?? decisionSessionId(input.session.id), now);
  }

  /** Forgets a session's tokens (sign-out, session replaced or deleted). */
  invalidate(sessionId: string): void {
    this.epoch += 1;
    for (const cacheKey of this.bySession.get(sessionId) ?? []) this.entries.delete(cacheKey);
    this.bySession.delete(sessionId);
  }

  /** Forgets every token (a new config was installed). */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
    this.bySession.clear();
  }

  /** How many tokens are cached (tests). */
  get size(): number {
    return this.entries.size;
  }

  private async mint(
    input: MintInput,
    cacheKey: string,
    sid: string,
    now: number,
  ): Promise<string | undefined> {
    const { fastPath, session, signer, target } = input;
    const epoch = this.epoch;
    const key = this.key();
    const allowed = allowedRoutes(input.route, input.decision, input.request, session);
    // Exactly what the slow path sends for this host: the same signer's assertion, the same values.
    const assertion = allowed.identity
      ? (signer.cachedAssertion(session, target) ?? (await signer.assertionFor(session, target)))
      : undefined;
    const minted = await mintDecisionToken(key, {
      host: target.audience,
      sid,
      routes: allowed.names,
      nowMs: now,
      lifetimeMs: fastPath.lifetimeMs,
      sessionExpiresAtMs: session.expiresAt,
      ...(assertion === undefined ? {} : { assertion, headers: claimHeaderValues(fastPath, session) }),
    });
    if (minted === undefined) return undefined;
    const expiresMs = minted.exp * 1000;
    const entry: Entry = {
      state: input.state,
      sid,
      token: minted.token,
      routes: new Set(minted.routes),
      mintedMs: minted.mintedMs,
      expiresMs,
      reuseUntil: now + (expiresMs - now) / 2,
      cookie: undefined,
    };
    if (this.epoch === epoch) this.remember(session.id, cacheKey, entry);
    return cookieOf(entry, fastPath, this.now());
  }

  private remember(sessionId: string, cacheKey: string, entry: Entry): void {
    if (this.entries.size >= MAX_ENTRIES) this.clear();
    this.entries.set(cacheKey, entry);
    const keys = this.bySession.get(sessionId) ?? new Set<string>();
    keys.add(cacheKey);
    this.bySession.set(sessionId, keys);
  }
}

/** The Set-Cookie for `entry` at `now` (Max-Age its remaining whole seconds); none once it is spent. */
function cookieOf(entry: Entry, fastPath: FastPathSettings, now: number): string | undefined {
  const maxAgeS = Math.floor((entry.expiresMs - now) / 1000);
  if (maxAgeS <= 0) return undefined;
  if (entry.cookie?.maxAgeS !== maxAgeS)
    entry.cookie = { maxAgeS, value: decisionSetCookie(fastPath.cookie, entry.token, maxAgeS) };
  return entry.cookie.value;
}

/**
 * The claim headers as the slow path sets them (authorizer.ts): each claim's values joined with
 * `,`, left out when empty or when they hold CR, LF or NUL; keyed by `claimHeaderKey`.
 */
function claimHeaderValues(fastPath: FastPathSettings, session: Session): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [key, claim] of fastPath.claimHeaders) {
    const value = claimValues(session.claims, claim).join(',');
    if (value !== '' && !/[\r\n\0]/.test(value)) headers[key] = value;
  }
  return headers;
}
