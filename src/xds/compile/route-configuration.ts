import { CATCH_ALL_VHOST, type IR, type IRRoute, type IRVirtualHost } from '../../ir/types.js';
import type { ProtoObject } from '../codec/codec.js';
import { sharedDuration, sharedWrapped } from './shared-values.js';
import { HTTP_FILTER_LUA, hostScopeName, INGRESS_ROUTE_CONFIG } from '../../contract/names.js';
import type { CompiledResource } from './compile.js';
import { LazyResource } from './lazy-resource.js';
import { ROUTE_CONFIGURATION_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE } from '../codec/type-urls.js';
import type { RouteScoping } from './route-scoping.js';
import { jwksRoute, publicRouteHeadersToRemove, routeAuthzConfig } from './ext-authz.js';
import { publicRouteLuaConfig } from './identity-strip.js';
import { LUA_OFF_FOR_ROUTE_CONFIGURATION } from './host-case.js';

/**
 * IR virtual hosts -> the one `route.v3.RouteConfiguration` the listener fetches over RDS.
 * Global response headers sit at the top; `most_specific_header_mutations_wins` lets a route's
 * own headers override them. Clusters are not validated at route load (`validate_clusters: false`)
 * because CDS is pushed first anyway and a strict check would reject a route briefly ahead of it.
 */
export function compileRouteConfiguration(ir: IR): ProtoObject {
  return routeConfiguration(
    INGRESS_ROUTE_CONFIG,
    compileHosts(ir).map((host) => (host.virtualHost ??= compileVirtualHost(host.vhost, ir))),
    ir,
  );
}

/** The IR-wide inputs of a host's table: held by lazy resources instead of the whole IR. */
type RouteContext = Pick<IR, 'internal' | 'authorize' | 'responseHeaders'>;

/**
 * One host's RouteConfiguration under per-host delivery, built when read (see LazyResource): the
 * host's virtual host alone, with the global response headers, and Lua switched off.
 */
class HostRouteConfiguration extends LazyResource {
  constructor(
    name: string,
    private readonly vhost: IRVirtualHost,
    private readonly routeContext: RouteContext,
  ) {
    super(name, ROUTE_CONFIGURATION_TYPE);
  }

  get message(): ProtoObject {
    return routeConfiguration(
      this.name,
      [compileVirtualHost(this.vhost, this.routeContext)],
      this.routeContext,
      LUA_OFF_FOR_ROUTE_CONFIGURATION,
    );
  }
}

/** The scope that selects a host's RouteConfiguration by the request's host, built when read. */
class HostScope extends LazyResource {
  constructor(
    name: string,
    private readonly host: string,
  ) {
    super(name, SCOPED_ROUTE_CONFIGURATION_TYPE);
  }

  get message(): ProtoObject {
    return {
      name: this.name,
      route_configuration_name: this.name,
      key: { fragments: [{ string_key: this.host }] },
    };
  }

  protected override get derivesFacts(): boolean {
    return true;
  }

  /** The RouteConfiguration it names: its own name. */
  protected override derivedFacts(): readonly string[] {
    return [this.name];
  }
}

/** One virtual host's compiled forms, remembered across reloads while its routes stay the same. */
interface CompiledHost {
  readonly vhost: IRVirtualHost;
  readonly context: string;
  /**
   * Single delivery: the virtual host's message, made on first use and kept, so a reload
   * rebuilds only the changed hosts of the one table. Per-host delivery keeps no message.
   */
  virtualHost: ProtoObject | undefined;
  /**
   * Per-host delivery: its RouteConfiguration and the scope naming it (made on first use). Every
   * field is set when the record is made, so V8 keeps them inline (no property array per host).
   */
  routeConfiguration: HostRouteConfiguration | undefined;
  scope: HostScope | undefined;
}

/** The previous compile's hosts, in IR order (sorted by name, the catch-all last). */
let compiledHosts: readonly CompiledHost[] = [];

/** Whether host `a` comes before host `b` in IR order (by name, the catch-all last). */
function hostPrecedes(a: string, b: string): boolean {
  if (a === b || a === CATCH_ALL_VHOST) return false;
  return b === CATCH_ALL_VHOST || a < b;
}

/**
 * Each virtual host's compiled form, reusing the previous compile's when the host holds the very
 * same IR routes (translate hands unchanged routes, and unchanged hosts, the same objects) and the
 * IR-wide inputs (authorization wiring, claim headers, global response headers) are unchanged.
 * Unchanged hosts then keep their resource objects (and, for the single table, their virtual host
 * messages), which the snapshot does not encode again.
 * Found by one merge walk beside the previous compile's hosts; an unchanged host object at the
 * walk's position costs no name comparison.
 */
function compileHosts(ir: IR, reuse = true): readonly CompiledHost[] {
  const context = JSON.stringify([ir.internal ?? null, ir.authorize, ir.responseHeaders]);
  const before = reuse ? compiledHosts : [];
  const out = new Array<CompiledHost>(ir.virtualHosts.length);
  let j = 0;
  for (let i = 0; i < ir.virtualHosts.length; i++) {
    const vhost = ir.virtualHosts[i] as IRVirtualHost;
    let old = before[j];
    if (old === undefined || old.vhost !== vhost) {
      while (j < before.length && hostPrecedes((before[j] as CompiledHost).vhost.name, vhost.name)) j++;
      old = before[j];
    }
    if (old !== undefined && old.vhost.name === vhost.name) j++;
    const reusable =
      old !== undefined &&
      old.context === context &&
      old.vhost.name === vhost.name &&
      (old.vhost === vhost ||
        (old.vhost.routes.length === vhost.routes.length &&
          old.vhost.routes.every((route, index) => route === vhost.routes[index])));
    out[i] =
      reusable && old !== undefined
        ? old.vhost === vhost
          ? old
          : { ...old, vhost }
        : { vhost, context, virtualHost: undefined, routeConfiguration: undefined, scope: undefined };
  }
  compiledHosts = out;
  return out;
}

/** The route configurations and (per-host delivery) the scopes that select them. */
export interface CompiledRouting {
  readonly routeConfigurations: readonly CompiledResource[];
  readonly scopes: readonly CompiledResource[];
}

/**
 * IR virtual hosts -> RDS and SRDS resources for `scoping`. Per host: one small RouteConfiguration
 * per virtual host (with the same global response headers) and one scope keyed by the host that
 * names it (`ingress/<host>` both), so a changed host is one small RDS resource that Envoy
 * rebuilds alone, and no single message has to carry every host: the scopes list (which SotW
 * must send whole) holds names only. Virtual hosts are sorted by name, so both lists are too.
 */
export function compileRouting(ir: IR, scoping: RouteScoping, reuse = true): CompiledRouting {
  if (scoping === 'single')
    return {
      routeConfigurations: [{ name: INGRESS_ROUTE_CONFIG, message: compileRouteConfiguration(ir) }],
      scopes: [],
    };
  const routeConfigurations: CompiledResource[] = [];
  const scopes: CompiledResource[] = [];
  const routeContext: RouteContext = {
    internal: ir.internal,
    authorize: ir.authorize,
    responseHeaders: ir.responseHeaders,
  };
  for (const compiled of compileHosts(ir, reuse)) {
    const vhost = compiled.vhost;
    if (compiled.routeConfiguration === undefined || compiled.scope === undefined) {
      const host = vhost.domains[0] as string;
      const name = hostScopeName(host);
      compiled.routeConfiguration = new HostRouteConfiguration(name, vhost, routeContext);
      compiled.scope = new HostScope(name, host);
    }
    routeConfigurations.push(compiled.routeConfiguration);
    scopes.push(compiled.scope);
  }
  return { routeConfigurations, scopes };
}

/** The global response headers as header options, made once per IR (shared by every host's table). */
const globalHeaderOptions = new WeakMap<object, ProtoObject[]>();

/** A RouteConfiguration; `perFilter` is its `typed_per_filter_config` (per-host tables switch Lua off). */
function routeConfiguration(
  name: string,
  virtualHosts: ProtoObject[],
  ir: RouteContext,
  perFilter?: ProtoObject,
): ProtoObject {
  let headers = globalHeaderOptions.get(ir.responseHeaders);
  if (headers === undefined) {
    headers = headerOptions(ir.responseHeaders);
    globalHeaderOptions.set(ir.responseHeaders, headers);
  }
  const out: ProtoObject = {
    name,
    virtual_hosts: virtualHosts,
    response_headers_to_add: headers,
    most_specific_header_mutations_wins: true,
    validate_clusters: sharedWrapped(false),
  };
  if (perFilter !== undefined) out.typed_per_filter_config = perFilter;
  return out;
}

/** `publicRouteHeadersToRemove` per IR authorize settings: made once per compile, not per host. */
const publicRemovalsByAuthorize = new WeakMap<object, readonly string[]>();

/**
 * One virtual host. With authorization on, the JWKS route comes first, every route carries its
 * ext_authz settings, and public routes strip identity headers themselves.
 */
function compileVirtualHost(vhost: IRVirtualHost, ir: RouteContext): ProtoObject {
  const internal = ir.internal;
  if (internal === undefined)
    return { name: vhost.name, domains: [...vhost.domains], routes: vhost.routes.map(compileRoute) };
  let publicRemovals = publicRemovalsByAuthorize.get(ir.authorize);
  if (publicRemovals === undefined) {
    publicRemovals = publicRouteHeadersToRemove(ir);
    publicRemovalsByAuthorize.set(ir.authorize, publicRemovals);
  }
  const routes = vhost.routes.map((route) => {
    const compiled = compileRoute(route);
    compiled.typed_per_filter_config = route.public
      ? { ...routeAuthzConfig(route), [HTTP_FILTER_LUA]: publicRouteLuaConfig() }
      : routeAuthzConfig(route);
    if (route.public) {
      const own = (compiled.request_headers_to_remove as string[] | undefined) ?? [];
      compiled.request_headers_to_remove = [...new Set([...own, ...publicRemovals])];
    }
    return compiled;
  });
  return { name: vhost.name, domains: [...vhost.domains], routes: [jwksRoute(), ...routes] };
}

/** One IR route -> an Envoy route. Exported for incremental compilation and tests. */
export function compileRoute(route: IRRoute): ProtoObject {
  const match: ProtoObject =
    route.match.kind === 'prefix'
      ? { prefix: route.match.value }
      : route.match.kind === 'path'
        ? { path: route.match.value }
        : { safe_regex: { regex: route.match.value } };
  if (route.authorityRegex !== undefined) {
    match.headers = [{ name: ':authority', string_match: { safe_regex: { regex: route.authorityRegex } } }];
  }
  const action: ProtoObject = { cluster: route.clusterName, timeout: sharedDuration(route.timeoutMs) };
  if (route.idleTimeoutMs !== undefined) action.idle_timeout = sharedDuration(route.idleTimeoutMs);
  if (route.prefixRewrite !== undefined) action.prefix_rewrite = route.prefixRewrite;
  if (route.regexRewrite !== undefined) {
    action.regex_rewrite = {
      pattern: { regex: route.regexRewrite.pattern },
      substitution: route.regexRewrite.substitution,
    };
  }
  if (route.hostRewrite.kind === 'auto') {
    action.auto_host_rewrite = sharedWrapped(true);
    action.append_x_forwarded_host = true;
  } else if (route.hostRewrite.kind === 'literal') {
    action.host_rewrite_literal = route.hostRewrite.host;
    action.append_x_forwarded_host = true;
  }
  if (route.allowWebsockets) action.upgrade_configs = [{ upgrade_type: 'websocket' }];
  const out: ProtoObject = { name: route.name, match, route: action };
  if (Object.keys(route.requestHeadersToSet).length > 0)
    out.request_headers_to_add = headerOptions(route.requestHeadersToSet);
  if (route.requestHeadersToRemove.length > 0)
    out.request_headers_to_remove = [...route.requestHeadersToRemove];
  if (Object.keys(route.responseHeadersToSet).length > 0)
    out.response_headers_to_add = headerOptions(route.responseHeadersToSet);
  return out;
}

function headerOptions(headers: Readonly<Record<string, string>>): ProtoObject[] {
  return Object.keys(headers)
    .sort()
    .map((key) => ({ header: { key, value: headers[key] }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }));
}
