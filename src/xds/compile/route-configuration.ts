import type { IR, IRRoute, IRVirtualHost } from '../../ir/types.js';
import { durationMs, wrapped, type ProtoObject } from '../codec/codec.js';
import { INGRESS_ROUTE_CONFIG } from '../../contract/names.js';

/**
 * IR virtual hosts -> the one `route.v3.RouteConfiguration` the listener fetches over RDS.
 * Global response headers sit at the top; `most_specific_header_mutations_wins` lets a route's
 * own headers override them. Clusters are not validated at route load (`validate_clusters: false`)
 * because CDS is pushed first anyway and a strict check would reject a route briefly ahead of it.
 */
export function compileRouteConfiguration(ir: IR): ProtoObject {
  return {
    name: INGRESS_ROUTE_CONFIG,
    virtual_hosts: ir.virtualHosts.map(compileVirtualHost),
    response_headers_to_add: headerOptions(ir.responseHeaders),
    most_specific_header_mutations_wins: true,
    validate_clusters: wrapped(false),
  };
}

function compileVirtualHost(vhost: IRVirtualHost): ProtoObject {
  return { name: vhost.name, domains: [...vhost.domains], routes: vhost.routes.map(compileRoute) };
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
  const action: ProtoObject = { cluster: route.clusterName, timeout: durationMs(route.timeoutMs) };
  if (route.idleTimeoutMs !== undefined) action.idle_timeout = durationMs(route.idleTimeoutMs);
  if (route.prefixRewrite !== undefined) action.prefix_rewrite = route.prefixRewrite;
  if (route.regexRewrite !== undefined) {
    action.regex_rewrite = { pattern: { regex: route.regexRewrite.pattern }, substitution: route.regexRewrite.substitution };
  }
  if (route.hostRewrite.kind === 'auto') {
    action.auto_host_rewrite = wrapped(true);
    action.append_x_forwarded_host = true;
  } else if (route.hostRewrite.kind === 'literal') {
    action.host_rewrite_literal = route.hostRewrite.host;
    action.append_x_forwarded_host = true;
  }
  if (route.allowWebsockets) action.upgrade_configs = [{ upgrade_type: 'websocket' }];
  const out: ProtoObject = { name: route.name, match, route: action };
  if (Object.keys(route.requestHeadersToSet).length > 0) out.request_headers_to_add = headerOptions(route.requestHeadersToSet);
  if (route.requestHeadersToRemove.length > 0) out.request_headers_to_remove = [...route.requestHeadersToRemove];
  if (Object.keys(route.responseHeadersToSet).length > 0) out.response_headers_to_add = headerOptions(route.responseHeadersToSet);
  return out;
}

function headerOptions(headers: Readonly<Record<string, string>>): ProtoObject[] {
  return Object.keys(headers)
    .sort()
    .map((key) => ({ header: { key, value: headers[key] }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }));
}
