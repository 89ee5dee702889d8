import type { IR, IRRoute, IRVirtualHost } from '../../ir/types.js';
import { durationMs, wrapped } from '../../proto/codec.js';
import type { CompiledResource } from '../../proto/compiled.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import type { ROUTE_CONFIGURATION_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE } from '../../proto/type-urls.js';
import { hostScopeName, INGRESS_ROUTE_CONFIG } from '../../contract/names.js';
import { routeScoping, type RouteScoping } from './route-scoping.js';
import { jwksRoute, publicRouteHeadersToRemove, routeAuthzConfig } from './ext-authz.js';
import { hostCaseOffForRouteConfiguration } from './host-case.js';
import { contentKeyOf } from './content-key.js';
import { kept } from './kept.js';
import { authenticateHost, authenticateVirtualHost, ownEndpointsRoute } from './own-http.js';
import { answerAction } from './answer.js';
import { compileTcpRoute } from './tcp-route.js';
import { identityPassMetadata } from './identity-strip.js';
import { rewriteResponseHeadersRoute } from './response-header-rewrites.js';
import { fastPathInternal, withFastPath } from './fast-path.js';

type VirtualHost = Message<'envoy.config.route.v3.VirtualHost'>;
type Route = Message<'envoy.config.route.v3.Route'>;

/** The IR-wide inputs of a RouteConfiguration besides its hosts. */
type RouteInputs = Pick<IR, 'internal' | 'authorize' | 'responseHeaders'>;

/** The delivery compile picked (see RouteScoping), its route configurations and its scopes. */
export interface CompiledRouting {
  readonly scoping: RouteScoping;
  /** Sorted by name. */
  readonly routeConfigurations: readonly CompiledResource<typeof ROUTE_CONFIGURATION_TYPE>[];
  /** Sorted by name; empty under single delivery. */
  readonly scopes: readonly CompiledResource<typeof SCOPED_ROUTE_CONFIGURATION_TYPE>[];
  /** What the next `compileRouting` may reuse (see RoutingMemo). */
  readonly memo: RoutingMemo;
  /** Virtual hosts compiled in this call: those `previous` did not hold. */
  readonly hostsCompiled: number;
}

/**
 * One virtual host compiled, as the memo keeps it: its content key, and under single delivery its
 * message (each build puts the one table together from every host's), under per-host its two
 * resources in their kept form (kept.ts: no message held; the next build reads them by key).
 */
interface CompiledHost {
  readonly contentKey: string;
  readonly vhost?: VirtualHost;
  readonly perHost?: {
    readonly routeConfiguration: CompiledResource<typeof ROUTE_CONFIGURATION_TYPE>;
    readonly scope: CompiledResource<typeof SCOPED_ROUTE_CONFIGURATION_TYPE>;
  };
}

/**
 * What one `compileRouting` hands the next: each IR virtual host's compiled form by the host
 * object (translate gives back the identical object for an unchanged host), valid while the
 * IR-wide route settings (`settings`, their content key) are unchanged. One call's entries only.
 */
export interface RoutingMemo {
  readonly settings: string;
  readonly hosts: ReadonlyMap<IRVirtualHost, CompiledHost>;
}

/**
 * IR virtual hosts -> RDS and SRDS resources, and the delivery they are for (`routeScoping`).
 * Per host: one small RouteConfiguration per virtual host (with the same global response headers,
 * the host-case filter switched off) and one scope keyed by the host that names it, both `ingress/<host>`, so a
 * changed host is one small RDS resource that Envoy rebuilds alone, and no single message has to
 * carry every host: the scopes list (which SotW must send whole) holds names only. Single: one
 * RouteConfiguration `ingress` with every virtual host. Either way the authenticate host (when
 * Envoy serves it, see own-http.ts) is one more virtual host, with its own scope under per-host.
 * A host that `previous` compiled under the same IR-wide settings is not compiled again: its
 * identical resources (and content keys) are taken from it. Same IR, same result, either way.
 */
export function compileRouting(ir: IR, previous?: RoutingMemo): CompiledRouting {
  const scoping = routeScoping(ir);
  // What every host's table reads besides its own virtual host, keyed once.
  const settings = contentKeyOf('route-settings', [ir.internal ?? null, ir.authorize, ir.responseHeaders]);
  const reusable = previous?.settings === settings ? previous.hosts : undefined;
  const hosts = new Map<IRVirtualHost, CompiledHost>();
  let hostsCompiled = 0;
  const perHost = scoping === 'per-host';
  // What a kept host table is made again from: the IR-wide inputs only, not the whole IR.
  const inputs: RouteInputs = {
    internal: ir.internal,
    authorize: ir.authorize,
    responseHeaders: ir.responseHeaders,
  };
  const tables: { readonly contentKey: string; readonly vhost: VirtualHost }[] = [];
  const hostTables: NonNullable<CompiledHost['perHost']>[] = [];
  for (const vhost of ir.virtualHosts) {
    const known = reusable?.get(vhost);
    const contentKey = known?.contentKey ?? contentKeyOf(`host\n${settings}`, vhost);
    const message = (): VirtualHost => {
      if (known?.vhost !== undefined) return known.vhost;
      hostsCompiled += 1;
      return compileVirtualHost(vhost, ir);
    };
    if (perHost) {
      const resources =
        known?.perHost ?? hostResources(vhost.domains[0] as string, { contentKey, vhost: message() }, ir);
      hostTables.push(resources);
      hosts.set(vhost, {
        contentKey,
        perHost: known?.perHost ?? keptHostResources(vhost, resources, inputs),
      });
    } else {
      const table = { contentKey, vhost: message() };
      tables.push(table);
      hosts.set(vhost, table);
    }
  }
  const memo = { settings, hosts };
  const ownHost = authenticateHost(ir);
  const own =
    ownHost === undefined
      ? undefined
      : {
          contentKey: contentKeyOf('authenticate-host', settings),
          vhost: authenticateVirtualHost(ownHost),
        };
  if (!perHost) {
    const all = [...(own === undefined ? [] : [own]), ...tables];
    const message = routeConfiguration(
      INGRESS_ROUTE_CONFIG,
      all.map((host) => host.vhost),
      ir,
    );
    // The one table is made of its hosts and the settings: its key is made of theirs.
    const contentKey = contentKeyOf('single', [settings, ...all.map((host) => host.contentKey)]);
    const routeConfigurations = [{ name: INGRESS_ROUTE_CONFIG, message, contentKey }];
    return { scoping, routeConfigurations, scopes: [], memo, hostsCompiled };
  }
  const routeConfigurations: CompiledResource<typeof ROUTE_CONFIGURATION_TYPE>[] = [];
  const scopes: CompiledResource<typeof SCOPED_ROUTE_CONFIGURATION_TYPE>[] = [];
  if (own !== undefined && ownHost !== undefined) {
    const resources = hostResources(ownHost, own, ir);
    routeConfigurations.push(resources.routeConfiguration);
    scopes.push(resources.scope);
  }
  for (const resources of hostTables) {
    routeConfigurations.push(resources.routeConfiguration);
    scopes.push(resources.scope);
  }
  return { scoping, routeConfigurations, scopes, memo, hostsCompiled };
}

/** The per-host RouteConfiguration and scope of `host`, both named `ingress/<host>`. */
function hostResources(
  host: string,
  compiled: { readonly contentKey: string; readonly vhost: VirtualHost },
  ir: RouteInputs,
): NonNullable<CompiledHost['perHost']> {
  const name = hostScopeName(host);
  const { contentKey } = compiled;
  return {
    routeConfiguration: { name, message: hostTable(name, compiled.vhost, ir), contentKey },
    // A scope is its host's name only: a change to the host's routes leaves it as it was.
    scope: { name, message: scopeOf(host), contentKey: contentKeyOf('scope', host) },
  };
}

/** The scope of `host`: keyed by the host, naming its RouteConfiguration (both `ingress/<host>`). */
function scopeOf(host: string): Message<'envoy.config.route.v3.ScopedRouteConfiguration'> {
  const name = hostScopeName(host);
  return { name, route_configuration_name: name, key: { fragments: [{ string_key: host }] } };
}

/** The per-host RouteConfiguration `name` of one compiled virtual host (host-case off). */
function hostTable(
  name: string,
  vhost: VirtualHost,
  ir: RouteInputs,
): Message<'envoy.config.route.v3.RouteConfiguration'> {
  return routeConfiguration(name, [vhost], ir, hostCaseOffForRouteConfiguration());
}

/**
 * A host's per-host resources as the memo keeps them (kept.ts): the table made again from the IR
 * host and the IR-wide `inputs` it was compiled under when read, the scope from the host name.
 */
function keptHostResources(
  vhost: IRVirtualHost,
  resources: NonNullable<CompiledHost['perHost']>,
  inputs: RouteInputs,
): NonNullable<CompiledHost['perHost']> {
  const { routeConfiguration: table, scope } = resources;
  const host = vhost.domains[0] as string;
  return {
    routeConfiguration: kept(table, { name: table.name, vhost, inputs }, keptHostTable),
    scope: kept(scope, host, scopeOf),
  };
}

/** A kept host table made again (see keptHostResources). */
function keptHostTable(kept: {
  readonly name: string;
  readonly vhost: IRVirtualHost;
  readonly inputs: RouteInputs;
}): Message<'envoy.config.route.v3.RouteConfiguration'> {
  return hostTable(kept.name, compileVirtualHost(kept.vhost, kept.inputs), kept.inputs);
}

/**
 * IR virtual hosts -> the one `route.v3.RouteConfiguration` the listener fetches over RDS.
 * Global response headers sit at the top; `most_specific_header_mutations_wins` lets a route's
 * own headers override them. Clusters are not validated at route load (`validate_clusters: false`)
 * because CDS is pushed first anyway and a strict check would reject a route briefly ahead of it.
 */
export function compileRouteConfiguration(ir: IR): Message<'envoy.config.route.v3.RouteConfiguration'> {
  const ownHost = authenticateHost(ir);
  return routeConfiguration(
    INGRESS_ROUTE_CONFIG,
    [
      ...(ownHost === undefined ? [] : [authenticateVirtualHost(ownHost)]),
      ...ir.virtualHosts.map((vhost) => compileVirtualHost(vhost, ir)),
    ],
    ir,
  );
}

/**
 * A RouteConfiguration; `perFilter` is its `typed_per_filter_config` (per-host tables switch
 * host-case off). Virtual hosts match ignoring the port (`ignore_port_in_host_matching`): the
 * connection manager keeps the port the browser sent (sign-in returns to it, and the assertion's
 * `iss`/`aud` carry it), so `app.example.com:8443` must still find `app.example.com`.
 */
function routeConfiguration(
  name: string,
  virtualHosts: VirtualHost[],
  ir: RouteInputs,
  perFilter?: Readonly<Record<string, AnyMessage>>,
): Message<'envoy.config.route.v3.RouteConfiguration'> {
  const out: Message<'envoy.config.route.v3.RouteConfiguration'> = {
    name,
    virtual_hosts: virtualHosts,
    response_headers_to_add: headerOptions(ir.responseHeaders),
    most_specific_header_mutations_wins: true,
    validate_clusters: wrapped(false),
    ignore_port_in_host_matching: true,
  };
  if (perFilter !== undefined) out.typed_per_filter_config = perFilter;
  return out;
}

/**
 * One virtual host. With authorization on, the JWKS route comes first, then the route of
 * Portcullis's own endpoints (`/.portcullis/*`, own-http.ts); every route carries its
 * ext_authz settings, and public routes also remove the identity headers by name
 * (`request_headers_to_remove`): a second line behind the strip filters of the connection manager,
 * which run on every request (listener.ts). Protected routes cannot: Envoy applies a route's
 * removals after ext_authz, so they would remove the assertion Portcullis sets. With the fast path
 * on, each replayable route is named by its decision name (fast-path.ts `withFastPath`).
 */
function compileVirtualHost(vhost: IRVirtualHost, ir: RouteInputs): VirtualHost {
  if (ir.internal === undefined)
    return { name: vhost.name, domains: [...vhost.domains], routes: vhost.routes.map(compileRoute) };
  const publicRemovals = publicRouteHeadersToRemove(ir);
  const fastPath = fastPathInternal(ir) !== undefined;
  const routes = vhost.routes.map((route) => {
    const compiled = compileRoute(route);
    compiled.typed_per_filter_config = { ...compiled.typed_per_filter_config, ...routeAuthzConfig(route) };
    if (route.public) {
      const own = compiled.request_headers_to_remove ?? [];
      compiled.request_headers_to_remove = [...new Set([...own, ...publicRemovals])];
    }
    return fastPath ? withFastPath(compiled, route) : compiled;
  });
  return {
    name: vhost.name,
    domains: [...vhost.domains],
    routes: [jwksRoute(), ownEndpointsRoute(), ...routes],
  };
}

/**
 * One IR route -> an Envoy route: a forwarding action to its cluster, or, for a route that
 * answers by itself, its redirect or direct response (answer.ts). Exported for tests.
 */
export function compileRoute(route: IRRoute): Route {
  const tcpAuthority = route.tcpAuthority;
  if (tcpAuthority !== undefined) return compileTcpRoute({ ...route, tcpAuthority });
  const match: Message<'envoy.config.route.v3.RouteMatch'> =
    route.match.kind === 'prefix'
      ? { prefix: route.match.value }
      : route.match.kind === 'path'
        ? { path: route.match.value }
        : { safe_regex: { regex: route.match.value } };
  if (route.authorityRegex !== undefined) {
    match.headers = [{ name: ':authority', string_match: { safe_regex: { regex: route.authorityRegex } } }];
  }
  if (route.answer !== undefined)
    return withHeaders(route, { name: route.name, match, ...answerAction(route.answer) });
  const action: Message<'envoy.config.route.v3.RouteAction'> = {
    cluster: route.clusterName,
    timeout: durationMs(route.timeoutMs),
  };
  if (route.idleTimeoutMs !== undefined) action.idle_timeout = durationMs(route.idleTimeoutMs);
  if (route.prefixRewrite !== undefined) action.prefix_rewrite = route.prefixRewrite;
  if (route.regexRewrite !== undefined) {
    action.regex_rewrite = {
      pattern: { regex: route.regexRewrite.pattern },
      substitution: route.regexRewrite.substitution,
    };
  }
  if (route.hostRewrite.kind === 'auto') {
    action.auto_host_rewrite = wrapped(true);
    action.append_x_forwarded_host = true;
  } else if (route.hostRewrite.kind === 'literal') {
    action.host_rewrite_literal = route.hostRewrite.host;
    action.append_x_forwarded_host = true;
  }
  if (route.allowWebsockets) action.upgrade_configs = [{ upgrade_type: 'websocket' }];
  return withHeaders(route, { name: route.name, match, route: action });
}

/**
 * `out` with the route's own request and response header changes, the client-sent identity
 * headers the identity strip lets through on it (`identityPassMetadata`), and its response header
 * rewrites (`rewriteResponseHeadersRoute`: metadata and per-filter config).
 */
function withHeaders(route: IRRoute, out: Route): Route {
  const pass = identityPassMetadata(route.passRequestIdentityHeaders ?? []);
  const rewrites = rewriteResponseHeadersRoute(route.responseHeaderRewrites);
  if (pass !== undefined || rewrites !== undefined)
    out.metadata = {
      filter_metadata: { ...pass?.filter_metadata, ...rewrites?.filterMetadata },
    };
  if (rewrites !== undefined) out.typed_per_filter_config = { ...rewrites.perFilter };
  if (Object.keys(route.requestHeadersToSet).length > 0)
    out.request_headers_to_add = headerOptions(route.requestHeadersToSet);
  if (route.requestHeadersToRemove.length > 0)
    out.request_headers_to_remove = [...route.requestHeadersToRemove];
  if (Object.keys(route.responseHeadersToSet).length > 0)
    out.response_headers_to_add = headerOptions(route.responseHeadersToSet);
  return out;
}

function headerOptions(
  headers: Readonly<Record<string, string>>,
): Message<'envoy.config.core.v3.HeaderValueOption'>[] {
  return Object.keys(headers)
    .sort()
    .map((key) => ({
      header: { key, value: headers[key] as string },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    }));
}
