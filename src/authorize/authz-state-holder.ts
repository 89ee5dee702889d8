import type { IR } from '../ir/types.js';
import { OverlayMap } from '../shared/overlay-map.js';
import {
  buildAuthzState,
  hostFinder,
  type AuthzState,
  type HostChanges,
  type RouteAuthz,
} from './authz-state.js';

/**
 * Holds the authorization state across reloads. A new config's state is installed before its
 * snapshot reaches Envoy, and every route a config dropped keeps the policy it last had until
 * `release`: Envoy keeps routing with the old routes until it has applied, and ACKed, the new
 * ones, and a Check in that window names a route id the new config no longer has; it is judged
 * by the policy of the route Envoy actually matched, not answered 404. A changed policy on a kept
 * route id applies at once. The runtime calls `release` once every Envoy holds the routes of the
 * latest config (xds/publish/make-before-break.ts).
 */
export class AuthzStateHolder {
  private current: AuthzState | undefined;
  /** The last installed config's own state, without leftovers. */
  private latest: AuthzState | undefined;
  /** Routes dropped since the last `release`, by id, with the policy each had last. */
  private retiring: ReadonlyMap<string, RouteAuthz> = new Map();

  /**
   * Compiles (reusing the last state's policies, see `buildAuthzState`) and installs the state for
   * `ir`. With `changes` from the last installed IR, only the hosts it names are compared.
   */
  install(ir: IR, changes?: HostChanges): void {
    const previous = this.latest;
    const next = buildAuthzState(ir, previous, changes);
    this.latest = next;
    const retiring = new Map<string, RouteAuthz>();
    for (const [id, route] of this.retiring) if (!next.routes.has(id)) retiring.set(id, route);
    // A route id the new config dropped belonged to a host it changed or dropped: a host it kept
    // (the same object) keeps its routes. `changes` names every host that is not kept.
    const named = changes !== undefined && changes.base === previous?.ir ? changes.virtualHosts : undefined;
    const kept = hostFinder(next.hosts);
    for (const [index, host] of (previous?.hosts ?? []).entries()) {
      if (named !== undefined ? !named.has(host.vhost.name) : kept(host.vhost, index) !== undefined) continue;
      for (const route of host.routes) if (!next.routes.has(route.id)) retiring.set(route.id, route);
    }
    this.retiring = retiring;
    this.current = retiring.size === 0 ? next : { ...next, routes: new OverlayMap(next.routes, retiring) };
  }

  /** Forgets the dropped routes: no Envoy routes by them any more. */
  release(): void {
    if (this.retiring.size === 0) return;
    this.retiring = new Map();
    this.current = this.latest;
  }

  /** The state to judge the next request with; throws before the first install. */
  state(): AuthzState {
    if (this.current === undefined)
      throw new Error('authorization state requested before the first config was loaded');
    return this.current;
  }
}
