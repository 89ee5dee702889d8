/**
 * What the compiled fast-path filters (xds/compile/fast-path.ts), the authorize service that mints
 * decision tokens (authorize/fast-path/) and the revocation feed must agree on: the cookie, the
 * claims Envoy reads, the metadata keys, the ECDS resource's name. Both sides import this module;
 * nothing else spells these strings. docs/fast-path.md explains the design.
 */
import { createHash } from 'node:crypto';

/** The decision token's cookie: the session cookie's name plus `_dt`, host-only. */
export function decisionCookieName(sessionCookieName: string): string {
  return `${sessionCookieName}_dt`;
}

/**
 * The header jwt_authn writes the token's `sid` into, for the revocation map to read. It has the
 * reserved prefix, so the identity strip drops any client-sent copy before jwt_authn runs, and the
 * credential strip drops it before the router.
 */
export const DECISION_SID_HEADER = 'x-portcullis-sid';

/** `iss` of every decision token: what Envoy's jwt_authn provider accepts. */
export const DECISION_TOKEN_ISSUER = 'portcullis-decision';

/** `typ` of every decision token, so no other JWT Portcullis signs is mistaken for one. */
export const DECISION_TOKEN_TYPE = 'portcullis-decision+jwt';

/** jwt_authn's provider and requirement name for decision tokens. */
export const DECISION_PROVIDER = 'portcullis-decision';

/** jwt_authn's `payload_in_metadata` key: the verified payload at `metadata[jwt_authn][s]`. */
export const DECISION_PAYLOAD_KEY = 's';

/**
 * Claims of a decision token that Envoy reads:
 * - `sid`: the decision session id (`decisionSessionId`), which the revocation map keys on;
 * - `r`: the decision names of the routes this session was allowed on (a list: CEL's `in`);
 * - `v`: when it was minted, in Unix ms: a revocation refuses tokens minted up to its `notBeforeMs`;
 * - `ja`: the identity assertion Envoy forwards as X-Portcullis-Jwt-Assertion;
 * - `h`: claim header values, keyed `c<index>` in the sorted list of claim header names.
 */
export const DECISION_CLAIMS = {
  sid: 'sid',
  routes: 'r',
  mintedMs: 'v',
  assertion: 'ja',
  headers: 'h',
} as const;

/**
 * The claim header names a decision token carries values for, lower-cased, without repeats and
 * sorted: the one at index i is the token's `h.c<i>` (`claimHeaderKey`). Compile maps them back to
 * headers and authorize fills them, both from this one list.
 */
export function decisionClaimHeaders(claimHeaders: Readonly<Record<string, string>>): string[] {
  return [...new Set(Object.keys(claimHeaders).map((name) => name.toLowerCase()))].sort();
}

/** The key under `h` of the claim header at `index` of the sorted claim header names. */
export function claimHeaderKey(index: number): string {
  return `c${index}`;
}

/**
 * The end of the decision name of a route that sends identity headers upstream
 * (translate/decision-name.ts). Envoy names each replayable route by its decision name (what the
 * shadow RBAC's `xds.route_name in r` reads), so the credential strip can tell from the route name
 * alone whether the assertion and claim headers jwt_authn set from the token may go upstream: no
 * per-route config or metadata, which would not fit a 10,000-route table in 4 MiB.
 */
export const DECISION_NAME_IDENTITY_SUFFIX = '.i';

/**
 * The shadow RBAC filter's name, which is also the name of the ECDS resource carrying its config
 * (the revocations); Envoy writes its result under `envoy.filters.http.rbac`.
 */
export const FAST_PATH_FILTER = 'portcullis.fast_path';

/** `shadow_rules_stat_prefix` of the shadow RBAC: its result is `fast_path_shadow_engine_result`. */
export const FAST_PATH_STAT_PREFIX = 'fast_path_';

/** The dynamic metadata key (namespace `envoy.filters.http.rbac`) that says the fast path allowed. */
export const FAST_PATH_RESULT_KEY = `${FAST_PATH_STAT_PREFIX}shadow_engine_result`;

/** The value of FAST_PATH_RESULT_KEY when Envoy decided by itself. */
export const FAST_PATH_ALLOWED = 'allowed';

/** Clock skew jwt_authn allows on a decision token's `exp`. */
export const DECISION_CLOCK_SKEW_S = 5;

/**
 * How far past the moment a session changed its revocation reaches (`notBeforeMs` = change +
 * this): tokens minted within it are refused too. It covers an instance whose copy of the session
 * was still the old one (the change feed's delay, milliseconds) or whose clock runs a little
 * ahead; instances' clocks are assumed within it of each other. The price: for this long after a
 * sign-in or a refresh, Portcullis decides the session's requests itself.
 */
export const DECISION_REVOCATION_MARGIN_MS = 1_000;

/**
 * The session id a decision token names: a one-way digest of the session id, so neither the
 * cookie nor the revocation list Envoy holds (its config dump) reveals a session id. 128 bits.
 */
export function decisionSessionId(sessionId: string): string {
  return createHash('sha256').update(`portcullis-decision-sid:${sessionId}`).digest('base64url').slice(0, 22);
}

/** One revocation: tokens of session `sid` minted at or before `notBeforeMs` are refused. */
export interface DecisionRevocation {
  readonly sid: string;
  readonly notBeforeMs: number;
}
