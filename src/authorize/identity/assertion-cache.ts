import type { Session } from '../../session/session.js';
import { assertionClaims, signAssertion, ASSERTION_LIFETIME_S } from './assertion.js';
import type { SigningKey } from '../../keys/signing-key.js';
import type { AssertionTarget } from '../request-host.js';

/** Re-sign this long before an assertion expires, so upstreams never receive one about to lapse. */
const REFRESH_BEFORE_EXPIRY_MS = 60_000;
/** Bound on cached assertions; past it the cache starts over (cheap, and rare in practice). */
const MAX_ENTRIES = 200_000;

/**
 * Signs identity assertions and reuses each one while it has more than a minute to live: signing
 * (ECDSA or RSA) costs far more than the rest of a decision, and a session asks for the same host
 * many times a minute. Entries are per session, issuer and audience (the request host), and
 * a session's entries are dropped the moment it is signed out.
 */
export class AssertionSigner {
  private readonly cache = new Map<string, { token: string; refreshAt: number }>();
  private readonly bySession = new Map<string, string[]>();

  constructor(
    readonly key: SigningKey,
    readonly claimNames: readonly string[],
    readonly groupsFilter: ReadonlySet<string> | undefined = undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The cached assertion for `session` to `target` when it is still fresh, else undefined. Lets the
   * common case answer synchronously (no promise hop in the Check path); `assertionFor` signs.
   */
  cachedAssertion(session: Session, target: AssertionTarget): string | undefined {
    const cached = this.cache.get(cacheKeyOf(session, target));
    return cached !== undefined && this.now() < cached.refreshAt ? cached.token : undefined;
  }

  /** A valid assertion for `session` to `target`: cached when fresh, else newly signed. */
  async assertionFor(session: Session, target: AssertionTarget): Promise<string> {
    const cacheKey = cacheKeyOf(session, target);
    const now = this.now();
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined && now < cached.refreshAt) return cached.token;
    const token = await signAssertion(
      this.key,
      assertionClaims(session, target, now, this.claimNames, this.groupsFilter),
    );
    if (this.cache.size >= MAX_ENTRIES) this.clear();
    this.cache.set(cacheKey, {
      token,
      refreshAt: now + ASSERTION_LIFETIME_S * 1000 - REFRESH_BEFORE_EXPIRY_MS,
    });
    const keys = this.bySession.get(session.id) ?? [];
    if (cached === undefined) keys.push(cacheKey);
    this.bySession.set(session.id, keys);
    return token;
  }

  /** Forgets a session's assertions (sign-out, session replaced). */
  invalidate(sessionId: string): void {
    for (const cacheKey of this.bySession.get(sessionId) ?? []) this.cache.delete(cacheKey);
    this.bySession.delete(sessionId);
  }

  clear(): void {
    this.cache.clear();
    this.bySession.clear();
  }
}

function cacheKeyOf(session: Session, target: AssertionTarget): string {
  return `${session.id}\n${target.issuer}\n${target.audience}`;
}
