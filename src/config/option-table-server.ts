/**
 * Rows of the option table for listeners, TLS, timeouts, observability, the databroker and
 * routes. See option-table.ts for the columns.
 */
import type { NotYetSupported, OptionSpec } from './option-spec.js';
import type { ServiceName } from './types.js';

/**
 * A DNS name: dot-separated labels of letters, digits and inner hyphens, the last not a number
 * (decimal or 0x hex): a name ending in one is an IPv4 address to URL parsers, and an IP gives no SNI.
 */
const HOST_NAME =
  /^(?=.{1,253}$)(?!(.*\.)?([0-9]+|0x[0-9a-f]*)$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const ALL: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy', 'databroker'];
const PROXY: readonly ServiceName[] = ['proxy'];
const HTTP: readonly ServiceName[] = ['authenticate', 'proxy'];
const DATABROKER: readonly ServiceName[] = ['databroker'];

// Not supported yet (see NotYetSupported): observability is issue 26, Redis and connections
// between services with certificates of one's own (not `tls_derive`) issue 26.
const METRICS: NotYetSupported = {
  status: 'not-yet',
  issue: 26,
  severity: 'warning',
  effect: 'nothing listens on it',
};
const TRACING: NotYetSupported = { ...METRICS, effect: 'nothing is traced' };
const PROXY_LOG_LEVEL: NotYetSupported = { ...METRICS, effect: 'Envoy logs at its warning level' };
const SERVICE_CA: NotYetSupported = {
  status: 'not-yet',
  issue: 26,
  severity: 'warning',
  effect: 'internal connections trust only the CA derived by `tls_derive`',
};

/** Listeners, TLS, timeouts, observability, databroker storage, routes. */
export const SERVER_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'address',
    group: 'Listeners and TLS',
    kind: { type: 'address' },
    default: ':443',
    services: HTTP,
    secret: false,
    doc: 'Address (`host:port` or `:port`) of the HTTP(S) listener Envoy serves users on.',
  },
  {
    key: 'insecure_server',
    group: 'Listeners and TLS',
    kind: { type: 'bool' },
    default: 'false',
    services: HTTP,
    secret: false,
    doc: 'Serve plain HTTP on `address` instead of HTTPS (behind a TLS-terminating load balancer, or for demos).',
  },
  {
    key: 'grpc_address',
    group: 'Listeners and TLS',
    kind: { type: 'address' },
    default: '127.0.0.1:5443',
    services: ALL,
    secret: false,
    doc: 'Address of the gRPC listener (ADS for Envoy, ext_authz, databroker). Loopback in all-in-one mode.',
  },
  {
    key: 'grpc_insecure',
    group: 'Listeners and TLS',
    kind: { type: 'bool' },
    default: 'false',
    services: ALL,
    secret: false,
    doc: 'Allow internal gRPC off loopback without TLS: a `grpc_address` that is not loopback, and `http://` service URLs of other hosts (`tls_derive` gives TLS instead). The port serves every listener and cluster, private keys included, to the Envoy that presents the credential derived from `shared_secret`, and internal calls carry session handles, all in the clear: set it only on a private network such as a compose or pod network.',
  },
  {
    key: 'use_proxy_protocol',
    group: 'Listeners and TLS',
    kind: { type: 'bool' },
    default: 'false',
    services: PROXY,
    secret: false,
    doc: 'Expect the PROXY protocol on the listener so client addresses (X-Forwarded-For) are right behind another proxy.',
  },
  {
    key: 'xff_num_trusted_hops',
    group: 'Listeners and TLS',
    kind: { type: 'int', min: 0, max: 16 },
    default: '0',
    services: PROXY,
    secret: false,
    doc: 'How many trusted proxies in front of Envoy append to X-Forwarded-For (0 unless a trusted load balancer is in front).',
  },
  {
    key: 'envoy_admin_address',
    group: 'Listeners and TLS',
    kind: { type: 'address' },
    default: '127.0.0.1:9901',
    services: PROXY,
    secret: false,
    doc: 'Loopback address of the supervised Envoy admin interface (never routed).',
  },
  {
    key: 'set_response_headers',
    group: 'Listeners and TLS',
    kind: { type: 'string_map' },
    services: PROXY,
    secret: false,
    doc: 'Response headers added to every route (replaces the removed `headers`). Unset: X-Frame-Options, X-XSS-Protection and, with TLS, HSTS. `disable: true` removes them all.',
  },
  {
    key: 'certificate',
    group: 'Listeners and TLS',
    kind: { type: 'pem', what: 'certificate' },
    services: HTTP,
    secret: false,
    doc: 'PEM certificate (chain) for the HTTPS listener, raw or base64-encoded.',
  },
  {
    key: 'certificate_key',
    group: 'Listeners and TLS',
    kind: { type: 'pem', what: 'private key' },
    services: HTTP,
    secret: true,
    doc: 'PEM private key for `certificate`, raw or base64-encoded.',
  },
  {
    key: 'certificate_file',
    group: 'Listeners and TLS',
    kind: { type: 'pem_file', what: 'certificate' },
    services: HTTP,
    secret: false,
    doc: 'Path of a PEM certificate (chain) file for the HTTPS listener; reloaded when the file changes.',
  },
  {
    key: 'certificate_key_file',
    group: 'Listeners and TLS',
    kind: { type: 'pem_file', what: 'private key' },
    services: HTTP,
    secret: false,
    doc: 'Path of the PEM private key file for `certificate_file`.',
  },
  {
    key: 'certificates',
    group: 'Listeners and TLS',
    kind: { type: 'certificates' },
    services: HTTP,
    secret: false,
    doc: 'More certificates: a list of `{cert, key}`, each a file path or (base64) PEM. Envoy picks one by SNI.',
  },
  {
    key: 'certificate_authority',
    group: 'Listeners and TLS',
    kind: { type: 'pem', what: 'certificate' },
    services: ALL,
    secret: false,
    support: SERVICE_CA,
    doc: 'PEM CA bundle (raw or base64) trusted for connections between services.',
  },
  {
    key: 'certificate_authority_file',
    group: 'Listeners and TLS',
    kind: { type: 'file', of: 'certificate_authority' },
    services: ALL,
    secret: false,
    doc: 'Path of a PEM file holding `certificate_authority`.',
  },
  {
    key: 'tls_derive',
    group: 'Listeners and TLS',
    kind: {
      type: 'string',
      pattern: HOST_NAME,
      hint: 'is not a DNS name (such as portcullis.internal; not an IP address)',
    },
    services: ALL,
    secret: false,
    doc: "Internal TLS without certificate files: a CA and a certificate for this DNS name (`portcullis.internal`) are derived from `shared_secret`, so every instance trusts the others. The gRPC listener and Portcullis's own HTTP endpoints then serve TLS, and every internal client (the services, Envoy) verifies its peer against the derived CA and this name, whatever address it dials. Service URLs are then `https://`.",
  },
  {
    key: 'default_upstream_timeout',
    group: 'Timeouts',
    kind: { type: 'duration' },
    default: '30s',
    services: PROXY,
    secret: false,
    doc: 'Route `timeout` used when a route sets none (websocket routes default to no timeout).',
  },
  {
    key: 'timeout_read',
    group: 'Timeouts',
    kind: { type: 'duration' },
    default: '30s',
    services: PROXY,
    secret: false,
    doc: 'Longest time Envoy waits for a whole request to arrive (HTTP connection manager `request_timeout`).',
  },
  {
    key: 'timeout_idle',
    group: 'Timeouts',
    kind: { type: 'duration' },
    default: '5m',
    services: PROXY,
    secret: false,
    doc: 'Downstream connection idle timeout.',
  },
  {
    key: 'authorize_timeout',
    group: 'Timeouts',
    kind: { type: 'duration' },
    default: '1s',
    services: PROXY,
    secret: false,
    doc: 'Longest time Envoy waits for one ext_authz Check: past it a protected request gets 503 (public routes never wait). `0s` means the default.',
  },
  {
    key: 'grpc_client_timeout',
    group: 'Timeouts',
    kind: { type: 'duration' },
    default: '10s',
    services: ['authenticate', 'authorize'],
    secret: false,
    doc: 'Deadline of each gRPC call to a separately run databroker (`databroker_service_url`).',
  },
  {
    key: 'log_level',
    group: 'Observability',
    kind: {
      type: 'enum',
      values: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
      aliases: {
        warning: 'warn',
        critical: 'fatal',
        panic: 'fatal',
        off: 'silent',
        none: 'silent',
        disabled: 'silent',
      },
    },
    default: 'info',
    services: ALL,
    secret: false,
    doc: 'Minimum level of Portcullis log lines (also accepted: warning, critical, panic, off, none, disabled).',
  },
  {
    key: 'proxy_log_level',
    group: 'Observability',
    kind: {
      type: 'enum',
      values: ['trace', 'debug', 'info', 'warn', 'error', 'critical', 'off'],
      aliases: { warning: 'warn', fatal: 'critical' },
    },
    services: PROXY,
    secret: false,
    support: PROXY_LOG_LEVEL,
    doc: "Envoy's log level. Unset: follows `log_level`.",
  },
  {
    key: 'metrics_address',
    group: 'Observability',
    kind: { type: 'address' },
    services: ALL,
    secret: false,
    support: METRICS,
    doc: 'Address (`host:port`) of the Prometheus metrics endpoint. Unset: no metrics listener.',
  },
  {
    key: 'tracing_sampling_rate',
    group: 'Observability',
    kind: { type: 'number', min: 0, max: 1 },
    default: '0.0001',
    services: ALL,
    secret: false,
    support: TRACING,
    doc: 'Fraction of requests traced, 0 to 1 (replaces the removed `tracing_debug`; 1 traces everything).',
  },
  {
    key: 'databroker_storage_type',
    group: 'Databroker',
    kind: { type: 'enum', values: ['memory', 'redis'] },
    default: 'memory',
    services: DATABROKER,
    secret: false,
    doc: 'Where the databroker keeps sessions and single-use sign-in ids, encrypted with a key derived from `shared_secret`: `memory` (in this process: lost on restart, one instance only) or `redis` (shared by every instance; survives restarts).',
  },
  {
    key: 'databroker_storage_connection_string',
    group: 'Databroker',
    kind: { type: 'secret_string' },
    services: DATABROKER,
    secret: true,
    doc: 'Redis URL for `databroker_storage_type: redis`: `redis://[user:password@]host:port[/db]`, `rediss://` (TLS), `redis+sentinel://host:port,host:port/<master>` (Sentinel) or `redis+cluster://host:port,host:port` (Cluster).',
  },
  {
    key: 'databroker_storage_connection_string_file',
    group: 'Databroker',
    kind: { type: 'file', of: 'databroker_storage_connection_string' },
    services: DATABROKER,
    secret: false,
    doc: 'Path of a file holding `databroker_storage_connection_string` (trimmed).',
  },
  {
    key: 'databroker_outage_grace',
    group: 'Databroker',
    kind: { type: 'duration' },
    default: '1m',
    services: ['authenticate', 'authorize'],
    secret: false,
    doc: 'How long sessions this instance has cached keep working while the session store (Redis or the databroker) is unreachable: a sign-out elsewhere cannot reach it meanwhile. Past it, requests that need a session get 503 until the store is back. `0s`: none.',
  },
  {
    key: 'routes',
    group: 'Routes',
    kind: { type: 'routes' },
    services: ALL,
    secret: false,
    doc: 'The routes: each maps a `from` URL to `to` URLs (or a redirect or response) with matchers, load balancing and access settings. In env and properties files: JSON, or base64 of YAML or JSON.',
  },
  {
    key: 'policy',
    group: 'Routes',
    kind: { type: 'routes' },
    services: ALL,
    secret: false,
    deprecatedFor: 'routes',
    doc: 'Older name of `routes`, accepted with a warning; its routes come before those under `routes`.',
  },
];
