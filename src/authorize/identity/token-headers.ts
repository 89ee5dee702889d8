import type { IRHeaderPart } from '../../ir/types.js';
import type { OAuthTokens, Session } from '../../session/session.js';
import { claimValues } from '../policy/claims.js';

/** A route's templated request headers as authorize fills them (`IRRoute.requestHeaderTemplates`). */
export interface RouteTokenHeaders {
  /** The route's key path (`routes[3]`), for the log line of a refusal. */
  readonly source: string;
  /** [lower-case header name, its parts], in header-name order. */
  readonly headers: readonly (readonly [string, readonly IRHeaderPart[]])[];
  /** Whether any header names the access token or the ID token (else no token is opened). */
  readonly needsTokens: boolean;
}

/** The entry of a route with templates, or undefined for a route without any. */
export function routeTokenHeaders(
  source: string,
  templates: Readonly<Record<string, readonly IRHeaderPart[]>> | undefined,
): RouteTokenHeaders | undefined {
  if (templates === undefined) return undefined;
  const headers = Object.keys(templates)
    .sort()
    .map((name) => [name, templates[name] as readonly IRHeaderPart[]] as const);
  const needsTokens = headers.some(([, parts]) =>
    parts.some((part) => part.kind === 'access_token' || part.kind === 'id_token'),
  );
  return { source, headers, needsTokens };
}

/** Which token a header needed and why it could not be sent. */
export interface MissingToken {
  readonly token: 'access_token' | 'id_token';
  /** `absent`: the session has none (or its sealed tokens do not open); `expired`: past its expiry. */
  readonly why: 'absent' | 'expired';
}

/** The filled headers: those to set, and those left out (a claim missing) that must be removed. */
export interface FilledHeaders {
  readonly set: readonly (readonly [string, string])[];
  readonly omitted: readonly string[];
}

/**
 * Fills `route`'s headers for `session` with its opened `tokens` at `now` (Unix ms). A token that
 * is absent or expired (the access token by the expiry the IdP gave, the ID token by its `exp`)
 * is a MissingToken: the caller refuses the request rather than send an empty or stale bearer.
 * A claim is its values joined with `,` (claimValues: strings, numbers and booleans; arrays give
 * their elements); a header naming a claim the session lacks, or whose value would hold CR, LF or
 * NUL, is omitted whole, never sent half filled.
 */
export function fillTokenHeaders(
  route: RouteTokenHeaders,
  session: Session,
  tokens: OAuthTokens | undefined,
  now: number,
): FilledHeaders | MissingToken {
  const set: [string, string][] = [];
  const omitted: string[] = [];
  for (const [name, parts] of route.headers) {
    let value = '';
    let complete = true;
    for (const part of parts) {
      if (part.kind === 'text') value += part.text;
      else if (part.kind === 'claim') {
        const claim = claimValues(session.claims, part.claim).join(',');
        if (claim === '') complete = false;
        value += claim;
      } else {
        const token = usableToken(part.kind, session, tokens, now);
        if (typeof token !== 'string') return token;
        value += token;
      }
    }
    if (complete && !/[\r\n\0]/.test(value)) set.push([name, value]);
    else omitted.push(name);
  }
  return { set, omitted };
}

function usableToken(
  kind: 'access_token' | 'id_token',
  session: Session,
  tokens: OAuthTokens | undefined,
  now: number,
): string | MissingToken {
  const token = kind === 'access_token' ? tokens?.accessToken : tokens?.idToken;
  if (token === undefined || token === '') return { token: kind, why: 'absent' };
  // Both expiries are recorded in the clear beside the sealed tokens when they are stored.
  const expiresAt =
    kind === 'access_token' ? session.tokens?.accessTokenExpiresAt : session.tokens?.idTokenExpiresAt;
  return expiresAt !== undefined && expiresAt <= now ? { token: kind, why: 'expired' } : token;
}

/** How many sessions' opened tokens a cache holds before it drops the oldest. */
export const OPENED_TOKENS_MAX = 4096;

/**
 * The opened tokens of recently seen sessions, per authorize service (never module-level), so a
 * busy session costs one decryption per token change, not per request. An entry is used only
 * while the session's sealed tokens are the very ones it was opened from (a refresh seals new
 * ones), and goes when the store invalidates the session (`invalidate`: refresh, sign-out) or the
 * shared secret changes (`clear`). Bounded: at `max` entries the oldest is dropped.
 */
export class SessionTokenCache {
  readonly #entries = new Map<
    string,
    { readonly sealed: string; readonly tokens: Promise<OAuthTokens | undefined> }
  >();

  /** `open`: opens a session's sealed tokens (session-tokens.ts openTokens with the shared secret). */
  constructor(
    private readonly open: (
      session: Session & { readonly tokens: NonNullable<Session['tokens']> },
    ) => Promise<OAuthTokens>,
    readonly max: number = OPENED_TOKENS_MAX,
  ) {}

  /** The session's tokens, opened or from the cache; undefined when it has none or they do not open. */
  tokensOf(session: Session): Promise<OAuthTokens | undefined> {
    const sealed = session.tokens;
    if (sealed === undefined) return Promise.resolve(undefined);
    const entry = this.#entries.get(session.id);
    if (entry?.sealed === sealed.sealed) return entry.tokens;
    // Through a promise, so an `open` that throws (no config yet) also counts as no tokens.
    const tokens = Promise.resolve({ ...session, tokens: sealed })
      .then((withTokens) => this.open(withTokens))
      .catch(() => undefined);
    this.#entries.delete(session.id);
    if (this.#entries.size >= this.max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(session.id, { sealed: sealed.sealed, tokens });
    return tokens;
  }

  /** Forgets the session `id` (the store replaced or deleted it). */
  invalidate(id: string): void {
    this.#entries.delete(id);
  }

  /** Forgets every session (the shared secret changed: the old tokens no longer open). */
  clear(): void {
    this.#entries.clear();
  }

  /** How many sessions are held now. */
  get size(): number {
    return this.#entries.size;
  }
}
