import { CATCH_ALL_VHOST, type IR, type IRRoute, type IRVirtualHost } from '../../ir/types.js';
import type { ProtoObject } from '../codec/codec.js';
import { sharedDuration, sharedWrapped } from './shared-values.js';
import { HTTP_FILTER_LUA, hostScopeName, INGRESS_ROUTE_CONFIG } from '../../contract/names.js';
import type { CompiledResource } from './compile.js';
import { NO_FACTS, type LazyBuilder, type LazyResource, type ResourceFacts } from './lazy-resource.js';
import {
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../codec/type-urls.js';
import { isExactHost, type RouteScoping } from './route-scoping.js';
import { inMemoryOrder } from './memory-order.js';
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

/** The IR-wide inputs of a RouteConfiguration besides its hosts. */
type RouteInputs = Pick<IR, 'internal' | 'authorize' | 'responseHeaders'>;

/**
 * The IR-wide inputs of a host's table, shared by the build's host records instead of the whole
 * IR, with `key`, their text: a host record is reused only under equal inputs.
 */
interface RouteContext extends RouteInputs {
  readonly key: string;
}

/**
 * How a host's record builds its messages under per-host delivery (see LazyResource): its
 * RouteConfiguration (the host's virtual host alone, with the global response headers, and Lua
 * switched off) and the scope that selects it by the request's host. Both are named by the record;
 * the table's references are kept from its first build, the scope's are its own name.
 */
const HOST_TABLE: LazyBuilder = Object.freeze({
  message(type: ResourceType, record: LazyResource): ProtoObject {
    const vhost = record.source as IRVirtualHost;
    if (type === SCOPED_ROUTE_CONFIGURATION_TYPE) {
      return {
        name: record.name,
        route_configuration_name: record.name,
        key: { fragments: [{ string_key: vhost.domains[0] }] },
      };
    }
    const context = record.context as RouteContext;
    return routeConfiguration(
      record.name,
      [compileVirtualHost(vhost, context)],
      context,
      LUA_OFF_FOR_ROUTE_CONFIGURATION,
    );
  },
  keepsFactsOf(type: ResourceType): boolean {
    return type === ROUTE_CONFIGURATION_TYPE;
  },
  derivedFacts(type: ResourceType, record: LazyResource): ResourceFacts {
    return type === SCOPED_ROUTE_CONFIGURATION_TYPE ? { eds: false, references: [record.name] } : NO_FACTS;
  },
});

/** A host's record (see HOST_TABLE): an object literal, so V8 can pretenure it (see LazyResource). */
function hostRecord(vhost: IRVirtualHost, context: RouteContext): LazyResource {
  return {
    name: hostScopeName(vhost.domains[0] as string),
    lazy: HOST_TABLE,
    source: vhost,
    context,
    facts: undefined,
  };
}

/**
 * One virtual host's compiled form under single delivery: its virtual host message, made on first
 * use and kept, so a reload rebuilds only the changed hosts of the one table.
 */
interface CompiledHost {
  readonly vhost: IRVirtualHost;
  readonly context: string;
  virtualHost: ProtoObject | undefined;
}

/** The previous compile's hosts under single delivery, in IR order (by name, the catch-all last). */
let compiledHosts: readonly CompiledHost[] = [];

/** The previous compile's host records under per-host delivery, in IR order. */
let hostRecords: readonly LazyResource[] = [];

/** Whether host `a` comes before host `b` in IR order (by name, the catch-all last). */
function hostPrecedes(a: string, b: string): boolean {
  if (a === b || a === CATCH_ALL_VHOST) return false;
  return b === CATCH_ALL_VHOST || a < b;
}

/**
 * Each virtual host's compiled form (`make(vhost, reusable)`), handed the previous compile's
 * (`before`, read through `vhostOf` and `contextOf`) when the host holds the very same IR routes
 * (translate hands unchanged routes, and unchanged hosts, the same objects) and the IR-wide inputs
 * (`context`: authorization wiring, claim headers, global response headers) are unchanged.
 * Unchanged hosts then keep their compiled objects, which the snapshot does not encode again.
 * Found by one merge walk beside the previous compile's hosts; an unchanged host object at the
 * walk's position costs no name comparison.
 */
function reuseHosts<T>(
  ir: IR,
  before: readonly T[],
  vhostOf: (compiled: T) => IRVirtualHost,
  contextOf: (compiled: T) => string,
  context: string,
  make: (vhost: IRVirtualHost, reusable: T | undefined) => T,
): T[] {
  const out = new Array<T>(ir.virtualHosts.length);
  let j = 0;
  for (let i = 0; i < ir.virtualHosts.length; i++) {
    const vhost = ir.virtualHosts[i] as IRVirtualHost;
    let old = before[j];
    if (old === undefined || vhostOf(old) !== vhost) {
      while (j < before.length && hostPrecedes(vhostOf(before[j] as T).name, vhost.name)) j++;
      old = before[j];
    }
    const oldHost = old === undefined ? undefined : vhostOf(old);
    if (oldHost !== undefined && oldHost.name === vhost.name) j++;
    const reusable =
      old !== undefined &&
      oldHost !== undefined &&
      contextOf(old) === context &&
      oldHost.name === vhost.name &&
      (oldHost === vhost ||
        (oldHost.routes.length === vhost.routes.length &&
          oldHost.routes.every((route, index) => route === vhost.routes[index])));
    out[i] = make(vhost, reusable ? old : undefined);
  }
  return out;
}

/** The text of the IR-wide inputs of host tables (see `reuseHosts`). */
function contextKey(ir: IR): string {
  return JSON.stringify([ir.internal ?? null, ir.authorize, ir.responseHeaders]);
}

/** Single delivery's hosts (see CompiledHost), reusing the previous compile's where allowed. */
function compileHosts(ir: IR): readonly CompiledHost[] {
  const context = contextKey(ir);
  compiledHosts = reuseHosts(
    ir,
    compiledHosts,
    (host) => host.vhost,
    (host) => host.context,
    context,
    (vhost, reusable): CompiledHost =>
      reusable === undefined
        ? { vhost, context, virtualHost: undefined }
        : reusable.vhost === vhost
          ? reusable
          : { ...reusable, vhost },
  );
  return compiledHosts;
}

/** The delivery compile picked (see RouteScoping), its route configurations and its scopes. */
export interface CompiledRouting {
  readonly scoping: RouteScoping;
  readonly routeConfigurations: readonly CompiledResource[];
  readonly scopes: readonly CompiledResource[];
}

/**
 * IR virtual hosts -> RDS and SRDS resources, and the delivery they are for (`routeScoping`'s
 * rule). Per host: one small RouteConfiguration per virtual host (with the same global response
 * headers) and one scope keyed by the host that names it (`ingress/<host>` both: one record, see
 * HOST_TABLE), so a changed host is one small RDS resource that Envoy rebuilds alone, and no
 * single message has to carry every host: the scopes list (which SotW must send whole) holds names
 * only. Virtual hosts are sorted by name, so both lists are too. Whether every host is exact is
 * found while the records are made, each new host checked as its record reads its name: a host
 * whose record is reused was checked when it was made, so a reload reads no unchanged host's name
 * (a separate walk read all 10,000).
 */
export function compileRouting(ir: IR, reuse = true, hostOrder?: Int32Array): CompiledRouting {
  if (ir.virtualHosts.length > 0) {
    const key = contextKey(ir);
    const context: RouteContext = {
      internal: ir.internal,
      authorize: ir.authorize,
      responseHeaders: ir.responseHeaders,
      key,
    };
    let exact = true;
    const newRecord = (vhost: IRVirtualHost): LazyResource => {
      if (!isExactHost(vhost)) exact = false;
      return hostRecord(vhost, context);
    };
    // A reused record keeps the host object it was made for: the same routes under the same name,
    // so the same messages (and the same exact host).
    const records =
      !reuse && hostOrder !== undefined && hostOrder.length === ir.virtualHosts.length
        ? inMemoryOrder(ir.virtualHosts, hostOrder, newRecord)
        : reuseHosts(
            ir,
            reuse ? hostRecords : [],
            (record) => record.source as IRVirtualHost,
            (record) => (record.context as RouteContext).key,
            key,
            (vhost, reusable) => reusable ?? newRecord(vhost),
          );
    if (exact) {
      hostRecords = records;
      return { scoping: 'per-host', routeConfigurations: records, scopes: records };
    }
  }
  return {
    scoping: 'single',
    routeConfigurations: [{ name: INGRESS_ROUTE_CONFIG, message: compileRouteConfiguration(ir) }],
    scopes: [],
  };
}

/** The global response headers as header options, made once per IR (shared by every host's table). */
const globalHeaderOptions = new WeakMap<object, ProtoObject[]>();

/** A RouteConfiguration; `perFilter` is its `typed_per_filter_config` (per-host tables switch Lua off). */
function routeConfiguration(
  name: string,
  virtualHosts: ProtoObject[],
  ir: RouteInputs,
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
function compileVirtualHost(vhost: IRVirtualHost, ir: RouteInputs): ProtoObject {
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
