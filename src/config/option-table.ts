/**
 * The one option table: every global setting's file key, environment variable, type, default,
 * the services that use it, whether it is secret, and a one-line doc. Parsing, env binding,
 * defaults, validation and docs/reference.md all come from here, so they cannot drift apart.
 */
export type ServiceName = 'authenticate' | 'authorize' | 'proxy' | 'databroker';

export type OptionKind =
  | { readonly type: 'string' }
  | { readonly type: 'address' }
  | { readonly type: 'bool' }
  | { readonly type: 'int'; readonly min: number; readonly max: number }
  | { readonly type: 'duration' }
  | { readonly type: 'enum'; readonly values: readonly string[] }
  | { readonly type: 'string_map' }
  | { readonly type: 'file_text' }
  | { readonly type: 'routes' };

export interface OptionSpec {
  /** Config-file key (lower case); the environment variable is its upper-cased form. */
  readonly key: string;
  readonly kind: OptionKind;
  /** Default as a string in the option's own syntax, or undefined for "unset". */
  readonly default?: string;
  readonly services: readonly ServiceName[];
  readonly secret: boolean;
  readonly doc: string;
}

const ALL: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy', 'databroker'];
const PROXY: readonly ServiceName[] = ['proxy'];

/** Every global option this version understands. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { key: 'address', kind: { type: 'address' }, default: ':443', services: PROXY, secret: false,
    doc: 'Address (`host:port` or `:port`) of the HTTP(S) listener Envoy serves users on.' },
  { key: 'insecure_server', kind: { type: 'bool' }, default: 'false', services: PROXY, secret: false,
    doc: 'Serve plain HTTP on `address` instead of HTTPS (behind a TLS-terminating load balancer, or for demos).' },
  { key: 'use_proxy_protocol', kind: { type: 'bool' }, default: 'false', services: PROXY, secret: false,
    doc: 'Expect the PROXY protocol on the listener so client addresses (X-Forwarded-For) are right behind another proxy.' },
  { key: 'xff_num_trusted_hops', kind: { type: 'int', min: 0, max: 16 }, default: '0', services: PROXY, secret: false,
    doc: 'How many trusted proxies in front of Envoy append to X-Forwarded-For (0 unless a trusted load balancer is in front).' },
  { key: 'log_level', kind: { type: 'enum', values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] }, default: 'info',
    services: ALL, secret: false, doc: 'Minimum level of Portcullis log lines.' },
  { key: 'grpc_address', kind: { type: 'address' }, default: '127.0.0.1:5443', services: ALL, secret: false,
    doc: 'Address of the gRPC listener (ADS for Envoy; ext_authz and databroker later). Loopback in all-in-one mode.' },
  { key: 'envoy_admin_address', kind: { type: 'address' }, default: '127.0.0.1:9901', services: PROXY, secret: false,
    doc: 'Loopback address of the supervised Envoy admin interface (never routed).' },
  { key: 'default_upstream_timeout', kind: { type: 'duration' }, default: '30s', services: PROXY, secret: false,
    doc: 'Route `timeout` used when a route sets none (websocket routes default to no timeout).' },
  { key: 'timeout_read', kind: { type: 'duration' }, default: '30s', services: PROXY, secret: false,
    doc: 'Longest time Envoy waits for a whole request to arrive (HTTP connection manager `request_timeout`).' },
  { key: 'timeout_idle', kind: { type: 'duration' }, default: '5m', services: PROXY, secret: false,
    doc: 'Downstream connection idle timeout.' },
  { key: 'set_response_headers', kind: { type: 'string_map' }, services: PROXY, secret: false,
    doc: 'Response headers added to every route. Unset: X-Frame-Options, X-XSS-Protection and, with TLS, HSTS. `disable: true` removes them all.' },
  { key: 'certificate', kind: { type: 'string' }, services: PROXY, secret: false,
    doc: 'Base64 PEM certificate (chain) for the HTTPS listener.' },
  { key: 'certificate_key', kind: { type: 'string' }, services: PROXY, secret: true,
    doc: 'Base64 PEM private key for `certificate`.' },
  { key: 'certificate_file', kind: { type: 'file_text' }, services: PROXY, secret: false,
    doc: 'Path of a PEM certificate (chain) file for the HTTPS listener; reloaded when the file changes.' },
  { key: 'certificate_key_file', kind: { type: 'file_text' }, services: PROXY, secret: true,
    doc: 'Path of the PEM private key file for `certificate_file`.' },
  { key: 'routes', kind: { type: 'routes' }, services: ALL, secret: false,
    doc: 'The routes: each maps a `from` URL to one or more `to` URLs with its matchers, load balancing and access settings.' },
  { key: 'policy', kind: { type: 'routes' }, services: ALL, secret: false,
    doc: 'Older name of `routes` (deprecated: accepted with a warning).' },
];

/** Environment variable name for an option key. */
export function envName(key: string): string {
  return key.toUpperCase();
}
