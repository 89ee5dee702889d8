import { typed, type ProtoObject } from '../codec/codec.js';
import { HTTP_FILTER_LUA } from '../../contract/names.js';
import { STRIP_SCRIPT_NAME, stripScript } from './identity-strip.js';
import { LOWER_CASE_HOST_SCRIPT } from './host-case.js';

/**
 * The connection manager's Lua filter, or undefined when nothing needs one. With authorization on
 * (`stripCookieName` given) it holds the credential-strip script that public routes name; under
 * per-host routes (`lowerCaseHosts`) its default code lower-cases the host of a request that found
 * no scope (`host-case.ts`). Neither runs on other routes: no default code in the single-table
 * mode, and every per-host table switches the filter off.
 */
export function luaFilter(
  stripCookieName: string | undefined,
  lowerCaseHosts: boolean,
): ProtoObject | undefined {
  if (stripCookieName === undefined && !lowerCaseHosts) return undefined;
  const config: ProtoObject = {};
  if (lowerCaseHosts) config.default_source_code = { inline_string: LOWER_CASE_HOST_SCRIPT };
  if (stripCookieName !== undefined)
    config.source_codes = { [STRIP_SCRIPT_NAME]: { inline_string: stripScript(stripCookieName) } };
  return { name: HTTP_FILTER_LUA, typed_config: typed('envoy.extensions.filters.http.lua.v3.Lua', config) };
}
