/**
 * The route option table: every key a route may carry, with its type and a one-line doc. It
 * drives the unknown-key errors and the route section of docs/reference.md. Access settings
 * (policy and shortcuts) are parsed and validated here; the authorize stage evaluates them.
 */
import type { NotYetSupported } from './option-table.js';

export type RouteOptionType =
  | 'url'
  | 'to'
  | 'string'
  | 'bool'
  | 'duration'
  | 'string_map'
  | 'string_list'
  | 'header_rewrites'
  | 'lb_policy'
  | 'health_checks'
  | 'outlier_detection'
  | 'percent'
  | 'policy'
  | 'redirect'
  | 'response'
  | 'secret'
  | 'any';

/** One row of the route option table. */
export interface RouteOptionSpec {
  readonly key: string;
  readonly type: RouteOptionType;
  readonly doc: string;
  /** Set while the key has no effect yet; reported when a route sets it (unsupported-options.ts). */
  readonly support?: NotYetSupported;
}

/** Every route key this version understands. */
export const ROUTE_OPTIONS: readonly RouteOptionSpec[] = [
  {
    key: 'from',
    type: 'url',
    doc: 'Source URL (scheme and host, optional port, no path); `*` wildcards allowed in the host. `tcp+https://host:port` makes a TCP route (clients CONNECT to host:port); `tcp+https://bastion.example.com/target:port` is the bastion form (clients dial the bastion host and CONNECT to target:port).',
  },
  {
    key: 'to',
    type: 'to',
    doc: 'Destination URL or list (http, https, h2c; tcp:// for TCP routes); weights as a `,N` suffix (`http://a:8080,3`), all or none. An HTTP route may have an empty list (a warning): it answers 503 until destinations are added, which then change only its endpoints (EDS).',
  },
  {
    key: 'redirect',
    type: 'redirect',
    doc: 'Answer with a redirect instead of forwarding (after the policy admits the request): https_redirect, scheme_redirect (http or https), host_redirect, port_redirect, path_redirect or prefix_rewrite, response_code (301 by default; 302, 303, 307, 308), strip_query. Instead of `to`; forwarding keys (timeouts, rewrites, upstream TLS, request headers) are errors.',
  },
  {
    key: 'response',
    type: 'response',
    doc: 'Answer with a fixed response instead of forwarding (after the policy admits the request): `{status, body}`, status 200-599, body at most 4096 bytes; its Content-Type from `set_response_headers`. Instead of `to`; forwarding keys are errors.',
  },
  { key: 'name', type: 'string', doc: 'Display name of the route.' },
  { key: 'prefix', type: 'string', doc: 'Match requests whose path starts with this prefix.' },
  { key: 'path', type: 'string', doc: 'Match requests whose path is exactly this.' },
  {
    key: 'regex',
    type: 'string',
    doc: "Match requests whose whole path matches this RE2 regular expression. `validate` compiles it as Envoy does (ASCII only, Envoy's Unicode classes, a bounded program size), so a pattern Envoy would refuse is an error here, never a NACK.",
  },
  { key: 'prefix_rewrite', type: 'string', doc: 'Replace the matched prefix with this before forwarding.' },
  {
    key: 'regex_rewrite_pattern',
    type: 'string',
    doc: 'RE2 pattern whose matches in the path are replaced by `regex_rewrite_substitution`.',
  },
  {
    key: 'regex_rewrite_substitution',
    type: 'string',
    doc: 'Replacement for `regex_rewrite_pattern` (`\\1` refers to groups).',
  },
  {
    key: 'load_balancing_policy',
    type: 'lb_policy',
    doc: 'ROUND_ROBIN (default), LEAST_REQUEST, RING_HASH, RANDOM or MAGLEV.',
  },
  {
    key: 'health_checks',
    type: 'health_checks',
    doc: "Active health checks (HTTP, TCP or gRPC) with Envoy's fields. Unlike Envoy, an unset `no_traffic_interval` equals `interval`, so idle clusters are checked as often as busy ones.",
  },
  {
    key: 'outlier_detection',
    type: 'outlier_detection',
    doc: "Passive outlier detection with Envoy's fields; `{}` means Envoy's defaults.",
  },
  {
    key: 'healthy_panic_threshold',
    type: 'percent',
    doc: 'Percentage of healthy hosts below which all hosts are used (Envoy default 50).',
  },
  {
    key: 'timeout',
    type: 'duration',
    doc: 'Upstream timeout for the whole response (default `default_upstream_timeout`, 30s).',
  },
  { key: 'idle_timeout', type: 'duration', doc: 'Stream idle timeout for the route (unset by default).' },
  { key: 'allow_websockets', type: 'bool', doc: 'Allow WebSocket upgrades; timeouts are off unless set.' },
  {
    key: 'set_request_headers',
    type: 'string_map',
    doc: "Request headers set before forwarding; `Host` rewrites the host. Values may name the signed-in user's `${portcullis.access_token}`, `${portcullis.id_token}` and `${portcullis.claims.<name>}`, filled in per request (`$${` is a literal `${`; any other `${` is an error).",
  },
  { key: 'remove_request_headers', type: 'string_list', doc: 'Request headers removed before forwarding.' },
  {
    key: 'set_response_headers',
    type: 'string_map',
    doc: 'Response headers set on this route, over the global ones.',
  },
  {
    key: 'rewrite_response_headers',
    type: 'header_rewrites',
    doc: "List of `{header, prefix, value}`: in the upstream's responses, a value of `header` (any letter case) that starts with `prefix` (compared exactly) gets `value` in place of that prefix, e.g. `Location: http://internal:8080/foo` -> `https://app.example.com/foo`. For each value the first rule of its header whose prefix matches applies; every value of a repeated header is rewritten on its own. Portcullis's own replies (sign-in redirects, error pages) are left alone. At most 32 rules; prefix non-empty.",
  },
  { key: 'preserve_host_header', type: 'bool', doc: 'Forward the original Host instead of the `to` host.' },
  { key: 'host_rewrite', type: 'string', doc: 'Forward this literal Host.' },
  { key: 'tls_skip_verify', type: 'bool', doc: 'Do not verify the upstream certificate (testing only).' },
  {
    key: 'allow_restricted_upstream',
    type: 'bool',
    doc: "Allow `to` at a link-local or cloud metadata address (169.254.0.0/16, fe80::/10, metadata.google.internal, ...) or at Portcullis's own `grpc_address`, `metrics_address` or `envoy_admin_address`; without it such a destination is an error.",
  },
  {
    key: 'tls_server_name',
    type: 'string',
    doc: 'SNI and expected certificate name for HTTPS upstreams (default: the `to` host).',
  },
  {
    key: 'tls_custom_ca',
    type: 'string',
    doc: 'Base64 PEM CA bundle trusted for HTTPS upstreams instead of the system store.',
  },
  { key: 'tls_custom_ca_file', type: 'string', doc: 'Path of a PEM CA bundle trusted for HTTPS upstreams.' },
  {
    key: 'tls_client_cert',
    type: 'string',
    doc: 'Base64 PEM client certificate presented to HTTPS upstreams.',
  },
  { key: 'tls_client_key', type: 'string', doc: 'Base64 PEM key for `tls_client_cert`.' },
  {
    key: 'tls_client_cert_file',
    type: 'string',
    doc: 'Path of a PEM client certificate presented to HTTPS upstreams.',
  },
  { key: 'tls_client_key_file', type: 'string', doc: 'Path of the PEM key for `tls_client_cert_file`.' },
  {
    key: 'allow_public_unauthenticated_access',
    type: 'bool',
    doc: 'Anyone may use the route, signed in or not. The route is never checked, so it cannot also carry a `policy` or another access setting (an error).',
  },
  { key: 'allow_any_authenticated_user', type: 'bool', doc: 'Any signed-in user may use the route.' },
  { key: 'allowed_users', type: 'string_list', doc: 'Users (by id or email) allowed on the route.' },
  { key: 'allowed_domains', type: 'string_list', doc: 'Email domains allowed on the route.' },
  {
    key: 'allowed_idp_claims',
    type: 'any',
    doc: 'Map of claim name to accepted values; a user with any of them is allowed.',
  },
  { key: 'cors_allow_preflight', type: 'bool', doc: 'Let CORS preflight requests through unauthenticated.' },
  {
    key: 'pass_identity_headers',
    type: 'bool',
    doc: 'Send the signed identity assertion and claim headers upstream (default: the global setting).',
  },
  {
    key: 'pass_request_identity_headers',
    type: 'string_list',
    doc: 'Client-sent identity headers this route lets through, by name (e.g. `Impersonate-User`). Every other one on the list in src/shared/identity-headers.ts (`Impersonate-*`, `X-Forwarded-User`, `-Email`, `-Groups`, `X-Auth-Request-*`, ...) is stripped on every route; a name off that list is an error.',
  },
  {
    key: 'policy',
    type: 'policy',
    doc: 'Policy rules: `allow`/`deny` with `and`, `or`, `not`, `nor` lists of criteria (see Policy criteria below).',
  },
  {
    key: 'idp_client_id',
    type: 'string',
    doc: 'Identity-provider client id for this route only (with `idp_client_secret`): the route becomes its own client of the global provider, and only sessions made through it count on the route.',
  },
  {
    key: 'idp_client_secret',
    type: 'secret',
    doc: 'Identity-provider client secret for this route only (with `idp_client_id`).',
  },
  {
    key: 'identity_provider',
    type: 'string',
    doc: "Name of the provider users of this route sign in with: a key of `identity_providers`, or `default` (the global `idp_*` provider, also used when unset). Sessions from another provider do not count here: the user is sent to sign in at this one. `idp_client_id`/`idp_client_secret` on the route replace the chosen provider's client.",
  },
];

/** Keys of ROUTE_OPTIONS, for unknown-key checks and did-you-mean hints. */
export const ROUTE_KEYS: readonly string[] = ROUTE_OPTIONS.map((option) => option.key);
