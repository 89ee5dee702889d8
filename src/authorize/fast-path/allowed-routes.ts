import type { Session } from '../../session/session.js';
import type { RouteAuthz, RouteDecision } from '../authz-state.js';
import type { AuthorizeRequest } from '../decision.js';

/**
 * At most this many of a host's other replayable routes are evaluated for one token: it bounds
 * the work of a mint on a host with very many routes. Routes past it simply ask Portcullis, whose
 * allow then names them.
 */
export const MAX_EVALUATED_SIBLINGS = 64;

/** The routes a decision token names, and whether any of them sends identity headers upstream. */
export interface AllowedRoutes {
  /** Decision names: the requested route first, then its allowed siblings in config order. */
  readonly names: readonly string[];
  /** Some named route passes identity headers: the token must carry the assertion and claims. */
  readonly identity: boolean;
}

/**
 * The replayable routes of the requested route's (`route`, named `decision`) virtual host that `session` is allowed on now:
 * the requested route (already allowed by the caller) first, then each sibling whose compiled
 * policy allows the same request and session, judged as decide() judges it (deny beats allow; a
 * sign-in reason is no allow). A sibling of another identity-provider client is left out without
 * evaluating it: decide() would judge it with no session at all, and then sends no identity
 * upstream, which a token carrying this session's assertion could not reproduce. Replayable
 * policies depend on the session alone, so what holds for this request holds for any request the
 * token is replayed on. At most MAX_EVALUATED_SIBLINGS siblings are evaluated.
 */
export function allowedRoutes(
  route: RouteAuthz,
  decision: RouteDecision,
  request: AuthorizeRequest,
  session: Session,
): AllowedRoutes {
  const names = [decision.name];
  let identity = route.passIdentityHeaders;
  let evaluated = 0;
  for (const sibling of decision.hostRoutes) {
    if (sibling === route || sibling.decision === undefined || sibling.idpId !== session.idpId) continue;
    if (evaluated === MAX_EVALUATED_SIBLINGS) break;
    evaluated += 1;
    const outcome = sibling.policy({ request, session });
    if (outcome.allow && !outcome.deny && !outcome.unauthenticated) {
      names.push(sibling.decision.name);
      identity ||= sibling.passIdentityHeaders;
    }
  }
  return { names, identity };
}
