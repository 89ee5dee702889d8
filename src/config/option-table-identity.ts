/**
 * Rows of the option table for services, secrets, the identity provider, cookies and identity
 * headers. See option-table.ts for the columns.
 */
import type { OptionSpec } from './option-spec.js';
import { canonicalHostName } from './host-name.js';
import { IDP_PROVIDERS, type ServiceName } from './types.js';

/** An OAuth 2.0 scope token (RFC 6749 3.3): printable ASCII without space, `"` or `\`. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Why `idp_provider: hosted` is refused: the peer's default mode signs users in through a service
 * its maker runs; Portcullis has none, so it needs your own provider and sign-in URL.
 */
const NO_HOSTED_SERVICE =
  'is refused: there is no hosted authenticate service (Portcullis signs users in itself); set idp_provider to your identity provider (oidc with idp_provider_url, or google, azure, okta, github, ...), with idp_client_id and idp_client_secret, and authenticate_service_url to the public URL where this Portcullis signs users in (such as https://authenticate.example.com)';

const ALL: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy', 'databroker'];
const AUTHN: readonly ServiceName[] = ['authenticate'];
const AUTHN_PROXY: readonly ServiceName[] = ['authenticate', 'proxy'];
const AUTHZ_PROXY: readonly ServiceName[] = ['authorize', 'proxy'];
const CLIENTS: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy'];

/** Services, secrets, identity provider, cookies, identity headers. */
export const IDENTITY_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'services',
    group: 'Services',
    kind: { type: 'enum_list', values: ['all', 'authenticate', 'authorize', 'proxy', 'databroker'] },
    default: 'all',
    services: ALL,
    secret: false,
    doc: 'Services this process runs, comma-separated: `all` (all-in-one), or any of authenticate, authorize, proxy, databroker.',
  },
  {
    key: 'authenticate_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Public URL of the authenticate service, where browsers sign in (`https://authenticate.example.com`): a host no route uses, no path; http only with `insecure_server`. Required when any route needs a signed-in user (no hosted service exists).',
  },
  {
    key: 'authenticate_internal_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    doc: "Where a proxy that runs without the authenticate service reaches that service's HTTP endpoints (`http://authenticate:5444`: its `grpc_address` port + 1; `https://` with `tls_derive`). Required then; unset when authenticate runs in the same process.",
  },
  {
    key: 'authenticate_callback_path',
    group: 'Services',
    kind: { type: 'url_path' },
    default: '/oauth2/callback',
    services: AUTHN,
    secret: false,
    doc: 'Path of the OAuth 2.0 redirect URI on the authenticate service (register `<authenticate_service_url><path>` with the provider).',
  },
  {
    key: 'authorize_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    doc: "gRPC URL of a separately run authorize service (`http://authorize:5443`, or `https://` with `tls_derive`), where the proxy's Envoy sends ext_authz Checks. Required for a proxy without authorize; must be unset when authorize runs in the same process.",
  },
  {
    key: 'authorize_internal_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHZ_PROXY,
    secret: false,
    doc: "Where this proxy's Envoy sends ext_authz Checks when it reaches authorize at another address than this process does: a sidecar Envoy in another container reaching the authorize of this process (`https://portcullis:5443` in docker-compose.yml). Default: `authorize_service_url`, else this process's `grpc_address` (all interfaces dialled on loopback).",
  },
  {
    key: 'databroker_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: CLIENTS,
    secret: false,
    doc: 'gRPC URL of a separately run databroker (formerly `cache_service_url`; `http://databroker:5443`, or `https://` with `tls_derive`). Required for authenticate or authorize without the databroker in the same process.',
  },
  {
    key: 'signout_redirect_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Where users land after signing out (default: the built-in signed-out page).',
  },
  {
    key: 'shared_secret',
    group: 'Secrets',
    kind: { type: 'secret_bytes32' },
    services: ALL,
    secret: true,
    doc: 'Base64 of 32 random bytes shared by all services (`head -c32 /dev/urandom | base64`). Required unless all-in-one.',
  },
  {
    key: 'shared_secret_file',
    group: 'Secrets',
    kind: { type: 'file', of: 'shared_secret' },
    services: ALL,
    secret: false,
    doc: 'Path of a file holding `shared_secret` (surrounding whitespace and the trailing newline are trimmed).',
  },
  {
    key: 'cookie_secret',
    group: 'Secrets',
    kind: { type: 'secret_bytes32' },
    services: AUTHN_PROXY,
    secret: true,
    doc: 'Base64 of 32 random bytes that seal the sign-in state and the per-flow sign-in cookie. Required unless all-in-one (where a random one is made at start, so sign-ins under way do not survive a restart).',
  },
  {
    key: 'cookie_secret_file',
    group: 'Secrets',
    kind: { type: 'file', of: 'cookie_secret' },
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Path of a file holding `cookie_secret` (trimmed).',
  },
  {
    key: 'idp_provider',
    group: 'Identity provider',
    kind: { type: 'enum', values: IDP_PROVIDERS, refused: { hosted: NO_HOSTED_SERVICE } },
    services: AUTHN,
    secret: false,
    doc: "Built-in identity provider by short name. With only `idp_provider_url` set, `oidc` is used. With `github` (needs the `read:org` scope, a default), the `groups` claim lists each of the user's teams as `org/team-slug` (the team slug, not its id) and, as an extra, each organization login (`org`). `hosted` is an error: Portcullis has no hosted authenticate service, so it signs users in itself with the provider set here and `authenticate_service_url`.",
  },
  {
    key: 'idp_provider_url',
    group: 'Identity provider',
    kind: { type: 'url', https: 'required' },
    services: AUTHN,
    secret: false,
    doc: "Base URL of the provider's OIDC discovery document, without `/.well-known/openid-configuration`; https (http only on loopback).",
  },
  {
    key: 'idp_client_id',
    group: 'Identity provider',
    kind: { type: 'string' },
    services: AUTHN,
    secret: false,
    doc: 'OAuth 2.0 client id issued by the provider. Required when a route needs a signed-in user and has no client of its own.',
  },
  {
    key: 'idp_client_secret',
    group: 'Identity provider',
    kind: { type: 'secret_string' },
    services: AUTHN,
    secret: true,
    doc: 'OAuth 2.0 client secret (or `idp_client_secret_file`; not both). Required with `idp_client_id`.',
  },
  {
    key: 'idp_client_secret_file',
    group: 'Identity provider',
    kind: { type: 'file', of: 'idp_client_secret' },
    services: AUTHN,
    secret: false,
    doc: 'Path of a file holding the client secret (trimmed), for secret managers.',
  },
  {
    key: 'idp_scopes',
    group: 'Identity provider',
    kind: {
      type: 'string_list',
      nonEmpty: true,
      item: {
        valid: (item) => SCOPE.test(item),
        hint: 'is not a scope (RFC 6749 3.3: printable, no spaces or quotes)',
      },
    },
    services: AUTHN,
    secret: false,
    doc: "OAuth 2.0 scopes requested at sign-in, replacing the provider's defaults (for `oidc`: openid, profile, email, offline_access); add e.g. `groups` if the provider needs it to send group claims.",
  },
  {
    key: 'idp_request_params',
    group: 'Identity provider',
    kind: { type: 'string_map' },
    aliases: ['ipd_request_params'],
    services: AUTHN,
    secret: false,
    doc: "Extra parameters for the sign-in request (e.g. `prompt: login`, `login_hint`), overriding the provider's defaults (such as Google's `access_type`). Naming a parameter the flow sets itself is an error: `client_id`, `redirect_uri`, `response_type`, `response_mode`, `scope` (use `idp_scopes`), `state`, `nonce`, `code_challenge`, `code_challenge_method`. Also read as `ipd_request_params`; both set and different is an error.",
  },
  {
    key: 'idp_trust_unverified_email',
    group: 'Identity provider',
    kind: { type: 'bool' },
    default: 'false',
    services: AUTHN,
    secret: false,
    doc: 'Let addresses the provider does not mark verified (`email_verified`) satisfy address policies; off, they count as none (docs/email-policies.md). Changing it signs everyone in again.',
  },
  {
    key: 'identity_providers',
    group: 'Identity provider',
    kind: { type: 'identity_providers' },
    services: AUTHN,
    secret: true,
    doc: 'Named identity providers that routes choose with `identity_provider: <name>` (the global `idp_*` keys stay the provider of every other route, named `default`). Each name (lower-case letters, digits, `-`, `_`; not `default`) maps to `provider`, `provider_url`, `client_id`, `client_secret` or `client_secret_file`, `scopes`, `request_params` and `trust_unverified_email`, read and checked as their `idp_*` namesakes; `client_id` and a secret are required, and `provider` or `provider_url`. In an environment variable or a properties file, write the whole map (or, in a properties file, one provider as `identity_providers.<name>`) as JSON. A session from one provider never counts on a route of another.',
  },
  {
    key: 'cookie_name',
    group: 'Cookies',
    kind: {
      type: 'string',
      pattern: /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/,
      hint: "is not a cookie name (letters, digits and !#$%&'*+-.^_`|~)",
    },
    default: '_portcullis',
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Name of the session cookie.',
  },
  {
    key: 'cookie_domain',
    group: 'Cookies',
    kind: {
      type: 'string',
      pattern: /^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/,
      hint: 'is not a domain name (such as example.com)',
    },
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Domain attribute of the session cookie. Unset: host-only cookies.',
  },
  {
    key: 'cookie_expire',
    group: 'Cookies',
    kind: { type: 'duration' },
    default: '14h',
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Lifetime of the session cookie and of the server-side session.',
  },
  {
    key: 'cookie_http_only',
    group: 'Cookies',
    kind: { type: 'bool' },
    default: 'true',
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Hide the session cookie from JavaScript.',
  },
  {
    key: 'cookie_same_site',
    group: 'Cookies',
    kind: { type: 'enum', values: ['', 'strict', 'lax', 'none'] },
    default: 'lax',
    services: AUTHN_PROXY,
    secret: false,
    doc: 'SameSite attribute of the session cookie: lax, strict, none (needs https: not with `insecure_server`), or empty for none sent.',
  },
  {
    key: 'signing_key',
    group: 'Identity headers',
    kind: { type: 'signing_key' },
    services: AUTHZ_PROXY,
    secret: true,
    doc: 'PEM (or base64 of PEM) ECDSA or RSA private key that signs the identity assertion; the algorithm follows the key. Several keys rotate: the first signs, all are published in the JWKS (put the new key first, keep the old one until upstreams have refreshed their JWKS, then drop it). Ed25519 is not supported.',
  },
  {
    key: 'signing_key_file',
    group: 'Identity headers',
    kind: { type: 'file', of: 'signing_key' },
    services: AUTHZ_PROXY,
    secret: false,
    doc: 'Path of a PEM file holding `signing_key`.',
  },
  {
    key: 'jwt_claims_headers',
    group: 'Identity headers',
    kind: { type: 'claims_headers' },
    aliases: ['jwt_claims_header'],
    services: AUTHZ_PROXY,
    secret: false,
    doc: 'Claims passed upstream as headers: a list (`email, groups` -> `X-Portcullis-Claim-Email`, ...) or a map of header name to claim.',
  },
  {
    key: 'jwt_groups_filter',
    group: 'Identity headers',
    kind: { type: 'string_list' },
    services: AUTHZ_PROXY,
    secret: false,
    doc: 'When set, the identity assertion carries only these groups (keeps it small for users in many groups); unset keeps all.',
  },
  {
    key: 'jwt_issuer_format',
    group: 'Identity headers',
    kind: { type: 'enum', values: ['host_only', 'uri'] },
    default: 'host_only',
    services: AUTHZ_PROXY,
    secret: false,
    doc: 'The assertion `iss`: the host, with its port when not the default (`host_only`), or `https://host/` (`uri`).',
  },
  {
    key: 'pass_identity_headers',
    group: 'Identity headers',
    kind: { type: 'bool' },
    default: 'false',
    services: AUTHZ_PROXY,
    secret: false,
    doc: 'Send the signed identity assertion and claim headers upstream on every route (a route can override it).',
  },
  {
    key: 'programmatic_redirect_domain_whitelist',
    group: 'Identity headers',
    kind: {
      type: 'string_list',
      item: {
        valid: (item) => canonicalHostName(item) !== undefined,
        hint: 'is not a host name; give names such as localhost or app.example.com (no scheme, port, path or wildcard)',
      },
    },
    default: 'localhost',
    services: AUTHN_PROXY,
    secret: false,
    doc: 'Host names programmatic login may redirect to, each exactly (no wildcards); `localhost` also allows loopback addresses.',
  },
];
