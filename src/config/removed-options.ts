/**
 * Removed and renamed options, with what replaces them. Setting one is an error whose message
 * names the replacement; `portcullis config migrate` rewrites them using `migrate`. This table is
 * part of the option table: docs/reference.md lists it, and parsing checks it before anything else.
 */

/** How `config migrate` rewrites a removed option. */
export type Migration =
  /** The same value under a new key. */
  | { readonly kind: 'rename'; readonly to: string }
  /** Nothing replaces it; the key is deleted. */
  | { readonly kind: 'drop' }
  /** Rewritten by a dedicated step in migrate.ts (its value changes form). */
  | { readonly kind: 'rewrite'; readonly to: string };

/** One removed option. */
export interface RemovedOption {
  readonly key: string;
  /** A top-level key, a route key, a policy criterion, or a value of `services`. */
  readonly scope: 'global' | 'route' | 'criterion' | 'service';
  /** How to fix it, completing "<key> was removed: ". */
  readonly fix: string;
  readonly migrate: Migration;
}

const DIRECTORY_SYNC =
  'directory sync is no longer part of Portcullis; groups come from identity-provider claims (use the `claim/groups` criterion, and add a groups scope to idp_scopes if the provider needs one)';
const IMPERSONATION = 'user impersonation was removed; delete this option';

/** Every removed or renamed option. */
export const REMOVED_OPTIONS: readonly RemovedOption[] = [
  { key: 'idp_service_account', scope: 'global', fix: DIRECTORY_SYNC, migrate: { kind: 'drop' } },
  { key: 'idp_refresh_directory_timeout', scope: 'global', fix: DIRECTORY_SYNC, migrate: { kind: 'drop' } },
  { key: 'idp_refresh_directory_interval', scope: 'global', fix: DIRECTORY_SYNC, migrate: { kind: 'drop' } },
  { key: 'idp_qps', scope: 'global', fix: DIRECTORY_SYNC, migrate: { kind: 'drop' } },
  {
    key: 'headers',
    scope: 'global',
    fix: 'use set_response_headers (the same map of header names to values)',
    migrate: { kind: 'rename', to: 'set_response_headers' },
  },
  {
    key: 'signing_key_algorithm',
    scope: 'global',
    fix: 'the algorithm now follows the key in signing_key (ECDSA or RSA); delete this option',
    migrate: { kind: 'drop' },
  },
  {
    key: 'tracing_debug',
    scope: 'global',
    fix: 'use tracing_sampling_rate (1 traces every request)',
    migrate: { kind: 'rewrite', to: 'tracing_sampling_rate' },
  },
  {
    key: 'grpc_server_max_connection_age',
    scope: 'global',
    fix: 'it is no longer configurable; delete it',
    migrate: { kind: 'drop' },
  },
  {
    key: 'grpc_server_max_connection_age_grace',
    scope: 'global',
    fix: 'it is no longer configurable; delete it',
    migrate: { kind: 'drop' },
  },
  {
    key: 'refresh_cooldown',
    scope: 'global',
    fix: 'sessions are refreshed by the databroker now; delete it',
    migrate: { kind: 'drop' },
  },
  { key: 'administrators', scope: 'global', fix: IMPERSONATION, migrate: { kind: 'drop' } },
  { key: 'enable_user_impersonation', scope: 'global', fix: IMPERSONATION, migrate: { kind: 'drop' } },
  {
    key: 'cache_service_url',
    scope: 'global',
    fix: 'use databroker_service_url',
    migrate: { kind: 'rename', to: 'databroker_service_url' },
  },
  {
    key: 'policy_file',
    scope: 'global',
    fix: 'put the routes under `routes` in the config file given with --config',
    migrate: { kind: 'rewrite', to: 'routes' },
  },
  {
    key: 'forward_auth_url',
    scope: 'global',
    fix: 'forward authentication was removed; send traffic through the proxy with routes',
    migrate: { kind: 'drop' },
  },
  {
    key: 'allowed_groups',
    scope: 'route',
    fix: 'write a policy with the `claim/groups` criterion instead, e.g. `policy: [{allow: {or: [{claim/groups: admins}]}}]`',
    migrate: { kind: 'rewrite', to: 'policy' },
  },
  {
    key: 'groups',
    scope: 'criterion',
    fix: 'use `claim/groups` (groups now come from identity-provider claims)',
    migrate: { kind: 'rewrite', to: 'claim/groups' },
  },
  {
    key: 'cache',
    scope: 'service',
    fix: 'use databroker',
    migrate: { kind: 'rename', to: 'databroker' },
  },
];

/** The removed option `key` in `scope`, if it is one. */
export function findRemoved(key: string, scope: RemovedOption['scope']): RemovedOption | undefined {
  return REMOVED_OPTIONS.find((option) => option.key === key && option.scope === scope);
}

/** The error message for a removed option: what it was, how to fix it, and that migrate can. */
export function removedMessage(option: RemovedOption, name: string = option.key): string {
  const verb = option.migrate.kind === 'rename' && option.key !== 'headers' ? 'renamed' : 'removed';
  return `${name} was ${verb}: ${option.fix} (\`portcullis config migrate\` fixes this)`;
}

/**
 * Options the peer (Pomerium) has that Portcullis does not implement. A config carrying one still
 * loads, with a warning saying so, instead of the unknown-option error.
 */
export const PEER_ONLY_OPTIONS: readonly string[] = [
  'autocert',
  'autocert_dir',
  'autocert_email',
  'autocert_must_staple',
  'autocert_use_staging',
  'authorize_service_urls',
  'databroker_service_urls',
  'databroker_internal_service_url',
  'idp_access_token_allowed_audiences',
  'runtime_flags',
  'skip_xff_append',
  'timeout_write',
  'codec_type',
  'dns_lookup_family',
  'otel_traces_exporter',
];

/**
 * Options of the peer that Portcullis does not implement and that would open access if ignored:
 * setting one is an error saying what ignoring it would do. Each maps to that consequence.
 */
export const PEER_ONLY_REFUSED: Readonly<Record<string, string>> = {
  downstream_mtls: 'client certificates would be neither required nor checked',
};

/**
 * Options of the peer that Portcullis does not implement because it does the same job elsewhere:
 * setting one is an error saying what to use instead, since ignoring it would leave, say, a load
 * balancer probing an address nothing listens on. Each maps to that replacement.
 */
export const PEER_ONLY_REPLACED: Readonly<Record<string, string>> = {
  health_check_addr:
    'health is served on metrics_address (`/healthz`: alive, `/readyz`: ready) and as the gRPC health service (grpc.health.v1) on grpc_address; set metrics_address instead',
};

/**
 * The error message for a peer-only option that is refused (PEER_ONLY_REFUSED or
 * PEER_ONLY_REPLACED), or undefined for any other key.
 */
export function peerOnlyRefusal(key: string): string | undefined {
  if (Object.hasOwn(PEER_ONLY_REFUSED, key))
    return `is not supported by Portcullis, and ignoring it would open access: ${PEER_ONLY_REFUSED[key]}; remove it`;
  if (Object.hasOwn(PEER_ONLY_REPLACED, key))
    return `is not supported by Portcullis: ${PEER_ONLY_REPLACED[key]}; remove it`;
  return undefined;
}
