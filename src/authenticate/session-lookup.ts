import type { Session } from '../session/session.js';
import type { HandlerContext } from './http/types.js';

/**
 * The live session a handle names: the handle verifies, the store has the session and it has not
 * expired. Undefined otherwise (a forged, stale or absent handle is simply no session). The one
 * lookup every handler uses, so none of them trusts a handle the others would refuse. A store
 * that cannot be reached rejects with StoreUnavailableError: an outage is never "no session"
 * (callers answer 503 and leave the cookie alone).
 */
export async function sessionForHandle(
  handle: string | undefined,
  context: Pick<HandlerContext, 'handles' | 'sessions' | 'now'>,
): Promise<Session | undefined> {
  if (handle === undefined) return undefined;
  const id = context.handles.verify(handle);
  if (id === undefined) return undefined;
  const session = await context.sessions.get(id);
  return session !== undefined && session.expiresAt > context.now() ? session : undefined;
}
