import { typed } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import {
  HTTP_FILTER_EXT_AUTHZ,
  HTTP_FILTER_JWT_AUTHN,
  RBAC_METADATA_NAMESPACE,
} from '../../contract/names.js';
import {
  ACCESS_LOG_DECIDED_BY,
  ACCESS_LOG_DECISION_SID,
  ACCESS_LOG_MARKER,
  ACCESS_LOG_USER_KEYS,
} from '../../contract/access-log.js';
import {
  DECISION_CLAIMS,
  DECISION_PAYLOAD_KEY,
  FAST_PATH_ALLOWED,
  FAST_PATH_RESULT_KEY,
} from '../../contract/fast-path.js';

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
 * The fields a line gains with the fast path on:
 * - `decided_by`: `envoy` when the shadow RBAC allowed (Envoy replayed an allow, ext_authz was not
 *   asked), `portcullis` when it did not (ext_authz was asked, or the route is public: Portcullis's
 *   config let it through), null where the shadow RBAC never ran (a request refused before the
 *   filters). Envoy 1.40's built-in CEL formatter computes it from the shadow result; a missing
 *   result is a CEL error, which the formatter writes as null.
 * - `decision_sid`: the verified decision token's `sid` (a one-way digest of the session id), so
 *   fast-path lines, which carry no `user` (ext_authz did not run), can still be told apart by
 *   session and matched with a revocation.
 */
export const FAST_PATH_ACCESS_LOG_FIELDS: Readonly<Record<string, string>> = {
  [ACCESS_LOG_DECIDED_BY.key]: `%CEL(${decidedBy()})%`,
  [ACCESS_LOG_DECISION_SID]: `%DYNAMIC_METADATA(${HTTP_FILTER_JWT_AUTHN}:${DECISION_PAYLOAD_KEY}:${DECISION_CLAIMS.sid})%`,
};

/** CEL text: which side decided, from the shadow RBAC's result (names are constants without quotes). */
function decidedBy(): string {
  const result = `metadata.filter_metadata['${RBAC_METADATA_NAMESPACE}']['${FAST_PATH_RESULT_KEY}']`;
  const { envoy, portcullis } = ACCESS_LOG_DECIDED_BY;
  return `${result} == '${FAST_PATH_ALLOWED}' ? '${envoy}' : '${portcullis}'`;
}

/**
 * The HCM's `access_log` list: Envoy's stdout logger writing one JSON object per request (every
 * request: routed, denied by ext_authz, redirected or answered directly). The supervised Envoy's
 * stdout is read by the supervisor, which logs each line once through the process logger
 * (`msg: "request"`); a sidecar Envoy prints the lines as JSON on its own stdout. With
 * `fastPath`, each line also says who decided (`FAST_PATH_ACCESS_LOG_FIELDS`). Pure.
 */
export function accessLogs(fastPath = false): Message<'envoy.config.accesslog.v3.AccessLog'>[] {
  const fields = fastPath ? { ...ACCESS_LOG_FIELDS, ...FAST_PATH_ACCESS_LOG_FIELDS } : ACCESS_LOG_FIELDS;
  return [
    {
      name: 'envoy.access_loggers.stdout',
      typed_config: typed('envoy.extensions.access_loggers.stream.v3.StdoutAccessLog', {
        log_format: { json_format: struct(fields) },
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
