-- wrk script: each request carries the next of the Cookie headers given as script arguments
-- (`wrk ... -s wrk-cookies.lua <url> -- <cookie> <cookie> ...`), in turn, so a run spreads over
-- many sessions. The requests are formatted once in init; request() only picks the next one.
-- done() is wrk-report.lua's (loaded from this script's directory).
local dir = debug.getinfo(1, 'S').source:match('^@(.*/)') or './'
dofile(dir .. 'wrk-report.lua')

local requests = {}
local next_request = 0

init = function(args)
  for i, cookie in ipairs(args) do
    local headers = {}
    for name, value in pairs(wrk.headers) do headers[name] = value end
    headers['Cookie'] = cookie
    requests[i] = wrk.format(nil, nil, headers)
  end
  if #requests == 0 then error('wrk-cookies.lua: no cookies given after --') end
end

request = function()
  next_request = next_request % #requests + 1
  return requests[next_request]
end
