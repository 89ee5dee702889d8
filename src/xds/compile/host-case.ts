import { typed } from '../../proto/codec.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import { HTTP_FILTER_HOST_CASE } from '../../contract/names.js';

const LUA_TYPE = 'envoy.extensions.filters.http.lua.v3.Lua';
const LUA_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.lua.v3.LuaPerRoute';

/**
 * Lua run for requests that found no route under per-host routes. Envoy looks a request's scope up
 * by the exact host part of `:authority` (listener.ts), so `App.Example.com` (curl and many HTTP libraries send the host as
 * typed) found no scope and got 404, though host names are case-insensitive (RFC 9110 4.2.3) and
 * the single-table mode matches them so. The code lower-cases `:authority` (its port, if any, is
 * digits) and clears the route cache, and Envoy looks the scope up again. It never runs on a routed request: every per-host
 * RouteConfiguration switches this filter off (`hostCaseOffForRouteConfiguration`). It sits first,
 * before ext_authz, so the route ext_authz reports to Portcullis is the one Envoy finally picked
 * (security-threats.md, CVE-2023-33189). Stripping credentials is not its job: the strip filters
 * (identity-strip.ts) run on every request, re-routed or not.
 */
export const LOWER_CASE_HOST_SCRIPT = `function envoy_on_request(handle)
  local headers = handle:headers()
  local host = headers:get(":authority")
  if host == nil then return end
  local lower = string.lower(host)
  if lower ~= host then
    headers:replace(":authority", lower)
    handle:clearRouteCache()
  end
end
`;

/** The host-case Lua filter, for the connection manager under per-host routes. */
export function hostCaseFilter(): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'> {
  return {
    name: HTTP_FILTER_HOST_CASE,
    typed_config: typed(LUA_TYPE, { default_source_code: { inline_string: LOWER_CASE_HOST_SCRIPT } }),
  };
}

/**
 * The RouteConfiguration-level setting of every per-host table: the host-case filter is off for
 * its routes (they were found, so their host needs no second lookup). Keyed by the filter's own
 * name, so it reaches no other Lua filter.
 */
export function hostCaseOffForRouteConfiguration(): Readonly<Record<string, AnyMessage>> {
  return { [HTTP_FILTER_HOST_CASE]: typed(LUA_PER_ROUTE_TYPE, { disabled: true }) };
}
