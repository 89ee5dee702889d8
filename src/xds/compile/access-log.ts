import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import { HTTP_FILTER_EXT_AUTHZ } from '../../contract/names.js';
import { ACCESS_LOG_MARKER, ACCESS_LOG_USER_KEYS } from '../../contract/access-log.js';

/**
 * The keys of one access-log line and the Envoy command operator each is filled from. A missing
 * value (no upstream for a local reply, no user on a public route) is JSON `null`; status and
 * duration are JSON numbers. The path is logged without its query string: queries carry
 * authorization codes and tokens (the OAuth callback's `code`), which must not reach a log.
 * `user` and `email` are what the authorizer put into ext_authz dynamic metadata on an allowed
 * request with a session (check-codec.ts).
 */
export const ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  [ACCESS_LOG_MARKER.key]: ACCESS_LOG_MARKER.value,
  method: '%REQ(:METHOD)%',
  host: '%REQ(X-ENVOY-ORIGINAL-HOST?:AUTHORITY)%',
  path: '%PATH(NQ)%',
  protocol: '%PROTOCOL%',
  status: '%RESPONSE_CODE%',
  response_flags: '%RESPONSE_FLAGS%',
  details: '%RESPONSE_CODE_DETAILS%',
  duration_ms: '%DURATION%',
  upstream_host: '%UPSTREAM_HOST%',
  upstream_cluster: '%UPSTREAM_CLUSTER%',
  request_id: '%REQ(X-REQUEST-ID)%',
  client: '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%',
  user: `%DYNAMIC_METADATA(${HTTP_FILTER_EXT_AUTHZ}:${ACCESS_LOG_USER_KEYS.id})%`,
  email: `%DYNAMIC_METADATA(${HTTP_FILTER_EXT_AUTHZ}:${ACCESS_LOG_USER_KEYS.email})%`,
};

/**
 * The HCM's `access_log` list: Envoy's stdout logger writing one JSON object per request (every
 * request: routed, denied by ext_authz, redirected or answered directly). The supervised Envoy's
 * stdout is read by the supervisor, which logs each line once through the process logger
 * (`msg: "request"`); a sidecar Envoy prints the lines as JSON on its own stdout. Pure.
 */
export function accessLogs(): Message<'envoy.config.accesslog.v3.AccessLog'>[] {
  return [
    {
      name: 'envoy.access_loggers.stdout',
      typed_config: typed('envoy.extensions.access_loggers.stream.v3.StdoutAccessLog', {
        log_format: { json_format: struct(ACCESS_LOG_FIELDS) },
      }),
    },
  ];
}

/**
 * A string map as a `google.protobuf.Struct` in the form protobufjs's `fromObject` takes (its
 * well-known types keep camelCase member names).
 */
function struct(values: Readonly<Record<string, string>>): Message<'google.protobuf.Struct'> {
  return {
    fields: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { stringValue: v }])),
  };
}
