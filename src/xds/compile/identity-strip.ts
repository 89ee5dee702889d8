import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { AUTHORIZATION_SCHEME, RESERVED_HEADER_PREFIX } from '../../contract/authz.js';
import {
  DECISION_NAME_IDENTITY_SUFFIX,
  DECISION_SID_HEADER,
  FAST_PATH_ALLOWED,
  FAST_PATH_RESULT_KEY,
  decisionCookieName,
} from '../../contract/fast-path.js';
import {
  HTTP_FILTER_STRIP_CREDENTIALS,
  HTTP_FILTER_STRIP_IDENTITY,
  RBAC_METADATA_NAMESPACE,
} from '../../contract/names.js';
import { IDENTITY_HEADER_NAMES, IDENTITY_HEADER_PREFIXES } from '../../shared/identity-headers.js';

const LUA_TYPE = 'envoy.extensions.filters.http.lua.v3.Lua';

/**
 * `text` as a Lua string literal: every byte outside `[A-Za-z0-9_.-]` as a decimal escape, so no
 * configured name (a cookie name, a header name) can end the literal or inject code.
 */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8'))
    out += /[A-Za-z0-9_.-]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `\\${String(byte).padStart(3, '0')}`;
  return `${out}"`;
}

/** The key of a route's `filter_metadata` entry for the identity strip: the names it passes. */
const PASS_KEY = 'pass';

/**
 * Lua that removes every client-sent identity header: each `x-portcullis-*` header and each
 * configured claim header (`claimHeaders`, lower-case names), always; and each header of the
 * shared identity list (src/shared/identity-headers.ts: `impersonate-*`, `x-forwarded-user`,
 * `x-auth-request-*`, ...) unless the route the request took names it in its metadata
 * (`identityPassMetadata`, from `pass_request_identity_headers`). It runs before ext_authz, so the
 * assertion and claim headers Portcullis sets on an allowed request are added after it and reach
 * the upstream, while nothing the client wrote under those names does. The route is read only
 * when such a header is present (Envoy resolves it for the request as the router will, after the
 * host-case filter's re-lookup under per-host routes).
 *
 * It also joins several Cookie fields into one with `; `, as Envoy's HTTP/2 codec does with
 * crumbs (RFC 9113 8.2.3) and as RFC 6265 5.4 has user agents send them. Over HTTP/1.1 ext_authz
 * would otherwise hand Portcullis the fields joined with `,`, which the cookie parse reads as one
 * cookie's value: the authorizer and the credential strip then read one header, the same way,
 * over either protocol.
 */
export function identityStripScript(claimHeaders: readonly string[]): string {
  const names = [...new Set(claimHeaders.map((name) => name.toLowerCase()))].sort();
  const table = (keys: readonly string[]): string =>
    keys.map((name) => `[${luaString(name)}] = true`).join(', ');
  return `local PREFIX = ${luaString(RESERVED_HEADER_PREFIX)}
local NAMES = {${table(names)}}
local IDENTITY = {${table(IDENTITY_HEADER_NAMES)}}
local IDENTITY_PREFIXES = {${IDENTITY_HEADER_PREFIXES.map(luaString).join(', ')}}
local function identity(key)
  if IDENTITY[key] then return true end
  for _, prefix in ipairs(IDENTITY_PREFIXES) do
    if string.sub(key, 1, #prefix) == prefix then return true end
  end
  return false
end
local function passed(handle)
  local pass = {}
  local listed = handle:metadata():get(${luaString(PASS_KEY)})
  if type(listed) == "table" then
    for _, name in ipairs(listed) do pass[name] = true end
  end
  return pass
end
function envoy_on_request(handle)
  local headers = handle:headers()
  local drop = {}
  local pass = nil
  for key, _ in pairs(headers) do
    if string.sub(key, 1, #PREFIX) == PREFIX or NAMES[key] then
      drop[#drop + 1] = key
    elseif identity(key) then
      if pass == nil then pass = passed(handle) end
      if not pass[key] then drop[#drop + 1] = key end
    end
  end
  for _, key in ipairs(drop) do headers:remove(key) end
  local count = headers:getNumValues("cookie")
  if count > 1 then
    local fields = {}
    for i = 0, count - 1 do fields[#fields + 1] = headers:getAtIndex("cookie", i) end
    headers:remove("cookie")
    headers:add("cookie", table.concat(fields, "; "))
  end
end
`;
}

/**
 * A route's `metadata` that lets the identity strip pass `names` (lower case, each on the shared
 * identity list: config validation checks it), or undefined for none. It is metadata the strip
 * reads, not per-filter config: the strip filter itself runs on every route.
 */
export function identityPassMetadata(
  names: readonly string[],
): Message<'envoy.config.core.v3.Metadata'> | undefined {
  if (names.length === 0) return undefined;
  const values = [...new Set(names)].sort().map((name) => ({ stringValue: name }));
  return {
    filter_metadata: {
      [HTTP_FILTER_STRIP_IDENTITY]: { fields: { [PASS_KEY]: { listValue: { values } } } },
    },
  };
}

/**
 * A Lua function `rewrite(headers, name, change)`: each value of header `name` becomes
 * `change(value)`, in order, and a value that becomes nil or empty is removed; the header is set
 * again only when some value changed. Shared by the scripts that edit a header field by field, so
 * repeated fields (several Cookie or Link fields) are handled one way everywhere.
 */
export const LUA_REWRITE_FIELDS = `local function rewrite(headers, name, change)
  local count = headers:getNumValues(name)
  if count == 0 then return end
  local values = {}
  local changed = false
  for i = 0, count - 1 do
    local value = headers:getAtIndex(name, i)
    local next = change(value)
    if next == value then
      values[#values + 1] = value
    else
      changed = true
      if next ~= nil and next ~= "" then values[#values + 1] = next end
    end
  end
  if changed then
    headers:remove(name)
    for _, value in ipairs(values) do headers:add(name, value) end
  end
end
`;

/** What the credential strip removes with the fast path on, besides the decision cookie and sid header. */
export interface FastPathStrip {
  /** The headers jwt_authn sets from a decision token's `ja` and `h` claims (lower case). */
  readonly identityHeaders: readonly string[];
}

/**
 * Lua that removes the session credentials from every request: each cookie named `cookieName` in
 * every Cookie header, and every Authorization header that carries the Portcullis scheme.
 *
 * A cookie is found by the rules of the `cookie` library, which the authorizer reads the session
 * with (src/session/cookie.ts): the header splits at each `;`; a piece with no `=` is no cookie;
 * the name is the text before the first `=` with spaces and tabs trimmed from both ends, compared
 * case-sensitively. So ` _portcullis =x` is the session cookie here exactly as it is to the
 * authorizer; test/support/cookie-vectors.ts holds the cases both sides are tested against. Every
 * occurrence is removed (the authorizer reads the first). A Cookie header that loses a cookie is
 * rebuilt from its other pieces (trimmed, joined with `; `), and dropped when none is left; other
 * headers are kept as sent. (The identity strip has joined the fields into one already; each
 * field is still handled on its own, so nothing depends on that.) An Authorization header goes
 * when any comma-separated credential in it has the scheme `Portcullis` in any letter case (the
 * authorizer accepts `Portcullis <token>`).
 *
 * With `fastPath`, the decision token's cookie (contract/fast-path.ts `decisionCookieName`) goes by
 * the same rules, and so does the DECISION_SID_HEADER header jwt_authn set from the token: jwt_authn
 * leaves the cookie in the request, and neither may reach an upstream (a decision token an upstream
 * saw could be replayed to Envoy). And when Envoy allowed the request by itself (the shadow RBAC's
 * result is `allowed`, so ext_authz did not run to settle the identity headers), the assertion and
 * claim headers jwt_authn set from the token (`fastPath.identityHeaders`) go unless the route's name
 * (its decision name) ends in DECISION_NAME_IDENTITY_SUFFIX: a route that sends no identity headers
 * gets none from a token either. An unnamed route or an Envoy without `routeName()` loses them, never
 * the reverse. Without `fastPath`, the script is byte for byte the one before the fast path.
 */
export function credentialStripScript(cookieName: string, fastPath?: FastPathStrip): string {
  const decision =
    fastPath === undefined
      ? ''
      : `local CREDENTIAL_COOKIES = {[COOKIE] = true, [${luaString(decisionCookieName(cookieName))}] = true}
local SID_HEADER = ${luaString(DECISION_SID_HEADER)}
local RBAC = ${luaString(RBAC_METADATA_NAMESPACE)}
local FAST_PATH_RESULT = ${luaString(FAST_PATH_RESULT_KEY)}
local ALLOWED = ${luaString(FAST_PATH_ALLOWED)}
local IDENTITY_SUFFIX = ${luaString(DECISION_NAME_IDENTITY_SUFFIX)}
local IDENTITY_HEADERS = {${[...new Set(fastPath.identityHeaders)].sort().map(luaString).join(', ')}}
`;
  const name = 'trim(string.sub(piece, 1, eq - 1))';
  const isCredentialCookie = fastPath === undefined ? `${name} == COOKIE` : `CREDENTIAL_COOKIES[${name}]`;
  const fastPathEnd =
    fastPath === undefined
      ? ''
      : `  headers:remove(SID_HEADER)
  local rbac = handle:streamInfo():dynamicMetadata():get(RBAC)
  if rbac ~= nil and rbac[FAST_PATH_RESULT] == ALLOWED then
    local route = handle:streamInfo():routeName() or ""
    if string.sub(route, -#IDENTITY_SUFFIX) ~= IDENTITY_SUFFIX then
      for _, key in ipairs(IDENTITY_HEADERS) do headers:remove(key) end
    end
  end
`;
  return `local COOKIE = ${luaString(cookieName)}
${decision}local SCHEME = ${luaString(AUTHORIZATION_SCHEME.toLowerCase())}
local function trim(text)
  return string.match(text, "^[ \\t]*(.-)[ \\t]*$")
end
local function without_session(value)
  local kept = {}
  local dropped = false
  for piece in string.gmatch(value .. ";", "([^;]*);") do
    local eq = string.find(piece, "=", 1, true)
    if eq ~= nil and ${isCredentialCookie} then
      dropped = true
    else
      local trimmed = trim(piece)
      if trimmed ~= "" then kept[#kept + 1] = trimmed end
    end
  end
  if dropped then return table.concat(kept, "; ") end
  return nil
end
local function portcullis_credential(value)
  for credential in string.gmatch(value, "[^,]+") do
    local scheme = string.match(credential, "^[ \\t]*([^ \\t]+)")
    if scheme ~= nil and string.lower(scheme) == SCHEME then return true end
  end
  return false
end
${LUA_REWRITE_FIELDS}function envoy_on_request(handle)
  local headers = handle:headers()
  rewrite(headers, "cookie", function(value)
    local stripped = without_session(value)
    if stripped == nil then return value end
    return stripped
  end)
  rewrite(headers, "authorization", function(value)
    if portcullis_credential(value) then return nil end
    return value
  end)
${fastPathEnd}end
`;
}

/**
 * The HTTP filter that strips client-sent identity headers, placed before ext_authz. It runs on
 * every request: its name is Portcullis's own and no route, virtual host or route table carries
 * per-filter config for it (nor for the extension name `envoy.filters.http.lua`), so no route,
 * scope or host spelling can skip it (contract/names.ts).
 */
export function identityStripFilter(
  claimHeaders: readonly string[],
): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'> {
  return {
    name: HTTP_FILTER_STRIP_IDENTITY,
    typed_config: typed(LUA_TYPE, {
      default_source_code: { inline_string: identityStripScript(claimHeaders) },
    }),
  };
}

/**
 * The HTTP filter that strips session credentials, placed after ext_authz (which must read them)
 * and right before the router, so nothing can add them back. Runs on every request, like
 * `identityStripFilter`.
 */
export function credentialStripFilter(
  cookieName: string,
  fastPath?: FastPathStrip,
): Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter'> {
  return {
    name: HTTP_FILTER_STRIP_CREDENTIALS,
    typed_config: typed(LUA_TYPE, {
      default_source_code: { inline_string: credentialStripScript(cookieName, fastPath) },
    }),
  };
}
