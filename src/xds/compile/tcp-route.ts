import type { IRRoute } from '../../ir/types.js';
import { durationMs } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';

/**
 * A TCP route (`route.tcpAuthority` set) -> an Envoy route that takes only a CONNECT naming
 * exactly that `host:port` (`connect_matcher` and an `:authority` match, case-insensitive: the
 * connection manager picks the virtual host ignoring the port, so the port is checked here) and
 * terminates it: Envoy answers 200, opens a TCP connection to the cluster and pipes the bytes
 * (`upgrade_configs` CONNECT with `connect_config`). Only these routes enable CONNECT, so a CONNECT
 * anywhere else is refused. Timeouts as the IR says (off unless set). Pure.
 */
export function compileTcpRoute(
  route: IRRoute & { readonly tcpAuthority: string },
): Message<'envoy.config.route.v3.Route'> {
  const action: Message<'envoy.config.route.v3.RouteAction'> = {
    cluster: route.clusterName,
    timeout: durationMs(route.timeoutMs),
    upgrade_configs: [{ upgrade_type: 'CONNECT', connect_config: {} }],
  };
  if (route.idleTimeoutMs !== undefined) action.idle_timeout = durationMs(route.idleTimeoutMs);
  return {
    name: route.name,
    match: {
      connect_matcher: {},
      headers: [{ name: ':authority', string_match: { exact: route.tcpAuthority, ignore_case: true } }],
    },
    route: action,
  };
}
