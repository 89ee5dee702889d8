import { typed } from '../../proto/codec.js';
import type { AnyMessage, Message } from '../../proto/messages.js';
import { HTTP_FILTER_REWRITE_RESPONSE_HEADERS } from '../../contract/names.js';
import type { IRResponseHeaderRewrite } from '../../ir/types.js';
import { LUA_REWRITE_FIELDS, luaString } from './identity-strip.js';

const LUA_TYPE = 'envoy.extensions.filters.http.lua.v3.Lua';
const LUA_PER_ROUTE_TYPE = 'envoy.extensions.filters.http.lua.v3.LuaPerRoute';

/** The name of the script in the filter's `source_codes`, which a route's per-route config names. */
const SCRIPT_NAME = 'rewrite';
/** The key of the rules in the route's `filter_metadata` entry for the filter. */
const RULES_KEY = 'rules';
/** The dynamic-metadata key the request half sets: this request reached the filter (and the router). */
const FORWARDED_KEY = 'forwarded';

/**
 * The one Lua script of `rewrite_response_headers`: fixed text, never made from config values.
 * The rules are data: the route's `filter_metadata` under the filter's name (`handle:metadata()`
 * reads exactly that), a list of `{header, prefix, value}` with lower-case header names.
 *
 * The request half only records, in the filter's dynamic metadata, that the request got this far:
 * past the identity strip, the fast path and ext_authz, on its way to the router. A reply
 * Portcullis or an earlier filter made instead (a sign-in redirect, a deny page from ext_authz)
 * never got here, so the response half leaves it alone even though Envoy passes local replies
 * through this filter's response half too. The response half takes each header the rules name,
 * once, and each of its values on its own (a repeated header such as Link or Set-Cookie keeps its
 * values and their order): the first rule of that header whose prefix starts the value (compared
 * byte for byte) replaces that prefix with its value; later rules are not tried on the result. A
 * value that becomes empty (a rule with `value: ""` whose prefix is the whole value) is removed,
 * as the credential strip's shared `rewrite` removes an emptied field.
 */
export const REWRITE_RESPONSE_HEADERS_SCRIPT = `local NAMESPACE = ${luaString(HTTP_FILTER_REWRITE_RESPONSE_HEADERS)}
local RULES = ${luaString(RULES_KEY)}
local FORWARDED = ${luaString(FORWARDED_KEY)}
local function rewritten(rules, name, value)
  for _, rule in ipairs(rules) do
    if rule.header == name and string.sub(value, 1, #rule.prefix) == rule.prefix then
      return rule.value .. string.sub(value, #rule.prefix + 1)
    end
  end
  return nil
end
${LUA_REWRITE_FIELDS}function envoy_on_request(handle)
  handle:streamInfo():dynamicMetadata():set(NAMESPACE, FORWARDED, true)
end
function envoy_on_response(handle)
  local state = handle:streamInfo():dynamicMetadata():get(NAMESPACE)
  if state == nil or state[FORWARDED] ~= true then return end
  local rules = handle:metadata():get(RULES)
  if type(rules) ~= "table" then return end
  local headers = handle:headers()
  local seen = {}
  for _, rule in ipairs(rules) do
    if not seen[rule.header] then
      seen[rule.header] = true
      rewrite(headers, rule.header, function(value)
        return rewritten(rules, rule.header, value) or value
      end)
    end
  end
end
`;

/**
 * The rewrite filter, for the connection manager when some route has rules (IRListener
 * `rewritesResponseHeaders`). It has no default code: on a route without a per-route config
 * naming its script (`rewriteResponseHeadersRoute`) Envoy runs no Lua at all, so routes without
 * rules pay nothing.
 */
export function rewriteResponseHeadersFilter(): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'> {
  return {
    name: HTTP_FILTER_REWRITE_RESPONSE_HEADERS,
    typed_config: typed(LUA_TYPE, {
      source_codes: { [SCRIPT_NAME]: { inline_string: REWRITE_RESPONSE_HEADERS_SCRIPT } },
    }),
  };
}

/** What a route with rules carries: its per-filter config (run the script) and its metadata (the rules). */
export interface RewriteRouteParts {
  readonly perFilter: Readonly<Record<string, AnyMessage>>;
  readonly filterMetadata: Readonly<Record<string, Message<'google.protobuf.Struct'>>>;
}

/**
 * A route's part of `rewrite_response_headers`, or undefined when it has no rules: the per-route
 * config that switches the filter's script on for it, keyed by the filter's own name (so it reaches
 * no other Lua filter), and the rules, in order, as `filter_metadata` under that name.
 */
export function rewriteResponseHeadersRoute(
  rules: readonly IRResponseHeaderRewrite[] | undefined,
): RewriteRouteParts | undefined {
  if (rules === undefined || rules.length === 0) return undefined;
  const values = rules.map(({ header, prefix, value }) => ({
    structValue: {
      fields: {
        header: { stringValue: header },
        prefix: { stringValue: prefix },
        value: { stringValue: value },
      },
    },
  }));
  return {
    perFilter: { [HTTP_FILTER_REWRITE_RESPONSE_HEADERS]: typed(LUA_PER_ROUTE_TYPE, { name: SCRIPT_NAME }) },
    filterMetadata: {
      [HTTP_FILTER_REWRITE_RESPONSE_HEADERS]: { fields: { [RULES_KEY]: { listValue: { values } } } },
    },
  };
}
