import type { OAuthTokens, Session } from '../session/session.js';
import type { Logger } from '../shared/logger.js';
import { requestClientKind } from './client-kind.js';
import type { AuthorizeRequest, Decision } from './decision.js';
import { denyResponse } from './error-responses.js';
import type { AllowDecision } from './fast-path/mint-on-allow.js';
import { fillTokenHeaders, type RouteTokenHeaders } from './identity/token-headers.js';

/** Where the authorizer gets a session's opened tokens (the service's SessionTokenCache). */
export interface TokenSource {
  tokensOf(session: Session): Promise<OAuthTokens | undefined>;
}

/** What `allowWithTokens` needs besides the allow. */
export interface TokenAllowContext {
  /** Absent: no tokens can be opened here, so a route that needs them refuses (fail closed). */
  readonly tokens: TokenSource | undefined;
  readonly route: RouteTokenHeaders;
  readonly session: Session;
  readonly request: AuthorizeRequest;
  readonly logger: Logger;
  readonly now: number;
}

/**
 * `allowed` with the route's templated request headers filled in from the session (overwriting
 * any client-sent copy; a header left out because its claim is missing is removed instead). When a
 * header needs a token the session lacks, or whose expiry has passed (the refresher renews tokens
 * before then; past it the IdP refused or could not be reached), the request is refused with 401
 * instead: an upstream never gets an empty or expired bearer. The warning names the route, the
 * token and why, never a token's value.
 */
export async function allowWithTokens(
  allowed: AllowDecision | Promise<AllowDecision>,
  context: TokenAllowContext,
): Promise<Decision> {
  const { route, session, request } = context;
  const tokens =
    route.needsTokens && context.tokens !== undefined ? await context.tokens.tokensOf(session) : undefined;
  const filled = fillTokenHeaders(route, session, tokens, context.now);
  if (!('set' in filled)) {
    context.logger.warn(
      {
        route: route.source,
        token: filled.token,
        why: filled.why,
        session: session.id,
        requestId: request.requestId,
      },
      `refused: the route's set_request_headers need the session's ${filled.token}, which is ${filled.why}`,
    );
    return denyResponse(
      401,
      filled.why === 'expired'
        ? 'This application needs your sign-in to be renewed, and the identity provider could not renew it. Sign out and sign in again.'
        : 'This application needs a token your sign-in does not have. Sign out and sign in again.',
      request.requestId,
      requestClientKind(request),
      [`${filled.token.replace('_', '-')}-${filled.why}`],
    );
  }
  const decision = await allowed;
  const names = new Set([...filled.set.map(([name]) => name), ...filled.omitted]);
  return {
    ...decision,
    setHeaders: [...decision.setHeaders.filter(([name]) => !names.has(name)), ...filled.set],
    removeHeaders: [...decision.removeHeaders.filter((name) => !names.has(name)), ...filled.omitted],
  };
}
