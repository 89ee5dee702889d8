import type { IR } from '../ir/types.js';
import { OverlayMap } from '../shared/overlay-map.js';
import { buildAuthzState, type AuthzState, type RouteAuthz } from './authz-state.js';

/**
 * Holds the authorization state across reloads. A new config's state is installed before its
 * snapshot reaches Envoy, and the previous state stays reachable for routes the new one dropped,
 * because Envoy keeps routing with the old config until it has applied the new one: a request in
 * that window is judged by the policy of the route Envoy actually matched.
 */
export class AuthzStateHolder {
  private current: AuthzState | undefined;
  /** The last installed config's own state, without leftovers (so only one generation is kept). */
  private latest: AuthzState | undefined;

  /** Compiles (reusing the last state's policies, see `buildAuthzState`) and installs the state for `ir`. */
  install(ir: IR): void {
    const next = buildAuthzState(ir, this.latest);
    const previous = this.latest;
    this.latest = next;
    if (previous === undefined) {
      this.current = next;
      return;
    }
    // The routes the new config dropped stay reachable (see the class comment), looked up behind it.
    const dropped = new Map<string, RouteAuthz>();
    for (const [id, route] of previous.routes) if (!next.routes.has(id)) dropped.set(id, route);
    this.current = dropped.size === 0 ? next : { ...next, routes: new OverlayMap(next.routes, dropped) };
  }

  /** The state to judge the next request with; throws before the first install. */
  state(): AuthzState {
    if (this.current === undefined)
      throw new Error('authorization state requested before the first config was loaded');
    return this.current;
  }
}
