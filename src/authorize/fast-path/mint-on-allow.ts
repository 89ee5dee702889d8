import type { Session } from '../../session/session.js';
import type { Logger } from '../../shared/logger.js';
import type { AuthzState, RouteAuthz } from '../authz-state.js';
import type { AuthorizeRequest, Decision } from '../decision.js';
import type { AssertionSigner } from '../identity/assertion-cache.js';
import type { RequestCredentials } from '../request-credentials.js';
import { assertionTarget } from '../request-host.js';
import type { DecisionMinter, MintInput, RevokedUntil } from './decision-minter.js';

/** An allow decision. */
export type AllowDecision = Extract<Decision, { readonly kind: 'allow' }>;

/** What the authorizer hands the fast path for one allow. */
export interface AllowContext {
  readonly revokedUntil: RevokedUntil | undefined;
  readonly signer: () => AssertionSigner;
  readonly state: AuthzState;
  readonly route: RouteAuthz;
  readonly request: AuthorizeRequest;
  readonly credentials: RequestCredentials;
  /** The session that counts on this route (undefined when none, or of another identity provider). */
  readonly session: Session | undefined;
}

/**
 * The mint input when this allow hands out a decision token, else undefined: the fast path is on,
 * the route is replayable, a session allowed it, and that session came from the session cookie
 * alone. A client that sent `Authorization: Portcullis <token>` keeps the slow path: it is an API
 * client that has no cookie jar to send the token back from.
 */
export function mintInputFor(context: AllowContext): MintInput | undefined {
  const { state, route, session, credentials } = context;
  const fastPath = state.fastPath;
  const decision = route.decision;
  if (fastPath === undefined || decision === undefined || session === undefined) return undefined;
  if (!credentials.hadSessionCookie || credentials.hadPortcullisAuthorization) return undefined;
  return {
    state,
    fastPath,
    route,
    decision,
    request: context.request,
    session,
    signer: context.signer(),
    target: assertionTarget(context.request.host, context.request.scheme, state.issuerFormat),
    revokedUntil: context.revokedUntil,
  };
}

/**
 * `allowed` with the decision token's Set-Cookie added to the client's response
 * (`responseHeaders`), minted by `minter` once the allow itself (and so the slow path's assertion)
 * is ready. Synchronous when both are; a failure to mint is logged and the allow answered without
 * a token, as it would be with the fast path off: never a failed Check.
 */
export function withDecisionCookie(
  allowed: AllowDecision | Promise<AllowDecision>,
  input: MintInput,
  minter: DecisionMinter,
  logger: Logger,
): AllowDecision | Promise<AllowDecision> {
  return allowed instanceof Promise
    ? allowed.then((decision) => addCookie(decision, input, minter, logger))
    : addCookie(allowed, input, minter, logger);
}

function addCookie(
  decision: AllowDecision,
  input: MintInput,
  minter: DecisionMinter,
  logger: Logger,
): AllowDecision | Promise<AllowDecision> {
  let cookie: string | undefined | Promise<string | undefined>;
  try {
    cookie = minter.setCookieFor(input);
  } catch (error) {
    return mintFailed(decision, error, logger);
  }
  return cookie instanceof Promise
    ? cookie.then(
        (value) => withSetCookie(decision, value),
        (error: unknown) => mintFailed(decision, error, logger),
      )
    : withSetCookie(decision, cookie);
}

function withSetCookie(decision: AllowDecision, cookie: string | undefined): AllowDecision {
  return cookie === undefined ? decision : { ...decision, responseHeaders: [['set-cookie', cookie]] };
}

function mintFailed(decision: AllowDecision, error: unknown, logger: Logger): AllowDecision {
  logger.warn(
    { err: error instanceof Error ? error.message : String(error) },
    'decision token not minted: answered without one',
  );
  return decision;
}
