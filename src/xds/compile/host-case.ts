import { typed, type ProtoObject } from '../codec/codec.js';
import { HTTP_FILTER_LUA } from '../../contract/names.js';

/**
 * Lua run for requests that found no route under per-host routes. Envoy looks a request's scope up
 * by its exact `:authority`, so `App.Example.com` (curl and many HTTP libraries send the host as
 * typed) found no scope and got 404, though host names are case-insensitive (RFC 9110 4.2.3) and
 * the single-table mode matches them so. The code lower-cases `:authority` and clears the route
 * cache, and Envoy looks the scope up again. It never runs on a routed request: every per-host
 * RouteConfiguration switches the Lua filter off (`LUA_OFF_FOR_ROUTE_CONFIGURATION`) and public
 * routes name their own script. The Lua filter sits before ext_authz, so the route ext_authz
 * reports to Portcullis is the one Envoy finally picked (security-threats.md, CVE-2023-33189).
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

/**
 * The RouteConfiguration-level setting of every per-host table: the Lua filter is off for its
 * routes (a public route's own setting, more specific, still runs the strip script).
 */
export function luaOffForRouteConfiguration(): ProtoObject {
  return { [HTTP_FILTER_LUA]: typed('envoy.extensions.filters.http.lua.v3.LuaPerRoute', { disabled: true }) };
}
