import { typed, type ProtoObject } from '../codec/codec.js';
import { AUTHORIZATION_SCHEME, RESERVED_HEADER_PREFIX } from '../../contract/authz.js';

/** The name of the credential-strip script among the Lua filter's `source_codes`. */
export const STRIP_SCRIPT_NAME = 'strip-portcullis-identity';

/**
 * The Lua script public routes run (they skip ext_authz, so nothing else cleans their requests):
 * it removes every `x-portcullis-*` header, a `Portcullis` Authorization header, and the session
 * cookie from every Cookie header (HTTP/2 may send several), keeping the other cookies. A public
 * upstream must never see a session handle it could replay on a protected route. `cookieName` is a
 * validated cookie token (no quotes or backslashes), so it is safe inside a Lua string.
 */
export function stripScript(cookieName: string): string {
  return `local COOKIE = "${cookieName}"
local PREFIX = "${RESERVED_HEADER_PREFIX}"
local SCHEME = "${AUTHORIZATION_SCHEME} "
function envoy_on_request(handle)
  local headers = handle:headers()
  local drop = {}
  for key, _ in pairs(headers) do
    if string.sub(key, 1, #PREFIX) == PREFIX then drop[#drop + 1] = key end
  end
  for _, key in ipairs(drop) do headers:remove(key) end
  local auth = headers:get("authorization")
  if auth ~= nil and string.sub(auth, 1, #SCHEME) == SCHEME then headers:remove("authorization") end
  local count = headers:getNumValues("cookie")
  if count > 0 then
    local kept = {}
    local dropped = false
    for i = 0, count - 1 do
      for part in string.gmatch(headers:getAtIndex("cookie", i), "[^;]+") do
        local trimmed = string.match(part, "^%s*(.-)%s*$")
        if string.match(trimmed, "^([^=]*)") == COOKIE then
          dropped = true
        elseif trimmed ~= "" then
          kept[#kept + 1] = trimmed
        end
      end
    end
    if dropped then
      headers:remove("cookie")
      if #kept > 0 then headers:add("cookie", table.concat(kept, "; ")) end
    end
  end
end
`;
}

/** Per-route setting that runs the strip script on a public route. */
export function publicRouteLuaConfig(): ProtoObject {
  return typed('envoy.extensions.filters.http.lua.v3.LuaPerRoute', { name: STRIP_SCRIPT_NAME });
}
