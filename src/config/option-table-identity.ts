/**
 * Rows of the option table for services, secrets, the identity provider, cookies and identity
 * headers. See option-table.ts for the columns.
 */
import type { NotYetSupported, OptionSpec } from './option-spec.js';
import { IDP_PROVIDERS, SERVICE_NAMES, type ServiceName } from './types.js';

const ALL: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy', 'databroker'];
const AUTHN: readonly ServiceName[] = ['authenticate'];
const AUTHN_PROXY: readonly ServiceName[] = ['authenticate', 'proxy'];
const AUTHZ_PROXY: readonly ServiceName[] = ['authorize', 'proxy'];
const CLIENTS: readonly ServiceName[] = ['authenticate', 'authorize', 'proxy'];

// Not supported yet (see NotYetSupported): sign-in is issue 24, split services issue 25. Sign-in
// settings warn rather than fail: without sign-in no session exists, so routes that need a user
// admit no one (fail closed). Settings whose loss would move sessions or decisions elsewhere fail.
const SIGN_IN: NotYetSupported = {
  status: 'not-yet',
  issue: 24,
  severity: 'warning',
  effect: 'Portcullis signs no one in yet, so routes that need a user admit no one',
};
const COOKIE: NotYetSupported = {
  status: 'not-yet',
  issue: 24,
  severity: 'warning',
  effect: 'Portcullis sets no session cookie yet',
};
const AUTHENTICATE_URL: NotYetSupported = {
  ...SIGN_IN,
  effect:
    'browsers are sent there to sign in, but Portcullis serves no sign-in yet, so routes that need a user admit no one',
};
const CALLBACK_PATH: NotYetSupported = { ...SIGN_IN, effect: 'no sign-in callback is served yet' };
const SIGN_OUT: NotYetSupported = { ...SIGN_IN, effect: 'Portcullis serves no sign-out yet' };
const COOKIE_SECRET: NotYetSupported = {
  ...COOKIE,
  effect: 'Portcullis sets no cookie yet; session handles are signed with a key derived from shared_secret',
};
const ISSUER_FORMAT: NotYetSupported = {
  ...SIGN_IN,
  which: '`uri`',
  effect: "the identity assertion's `iss` is always the bare host name",
};
const PROGRAMMATIC_LOGIN: NotYetSupported = {
  ...SIGN_IN,
  effect: 'Portcullis serves no programmatic login yet',
};
const SPLIT_SERVICES: NotYetSupported = {
  status: 'not-yet',
  issue: 25,
  severity: 'error',
  which: 'anything but `all`',
  effect: 'this process would still run every service (all-in-one), not only those listed',
  works: (value) =>
    Array.isArray(value) && (value.includes('all') || SERVICE_NAMES.every((name) => value.includes(name))),
};
const AUTHORIZE_URL: NotYetSupported = {
  status: 'not-yet',
  issue: 25,
  severity: 'error',
  effect: 'Check would be answered by this process, not by that authorize service',
};
const DATABROKER_URL: NotYetSupported = {
  status: 'not-yet',
  issue: 25,
  severity: 'error',
  effect: "sessions would be kept in this process's memory, not in that databroker",
};
const AUTHENTICATE_INTERNAL_URL: NotYetSupported = {
  status: 'not-yet',
  issue: 25,
  severity: 'warning',
  effect: 'nothing reaches the authenticate service through it',
};

/** Services, secrets, identity provider, cookies, identity headers. */
export const IDENTITY_OPTIONS: readonly OptionSpec[] = [
  {
    key: 'services',
    group: 'Services',
    kind: { type: 'enum_list', values: ['all', 'authenticate', 'authorize', 'proxy', 'databroker'] },
    default: 'all',
    services: ALL,
    secret: false,
    support: SPLIT_SERVICES,
    doc: 'Services this process runs, comma-separated: `all` (all-in-one), or any of authenticate, authorize, proxy, databroker.',
  },
  {
    key: 'authenticate_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'required' },
    services: AUTHN_PROXY,
    secret: false,
    support: AUTHENTICATE_URL,
    doc: 'Public https URL of a self-hosted authenticate service. Unset: the hosted authenticate service, with no identity provider settings.',
  },
  {
    key: 'authenticate_internal_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    support: AUTHENTICATE_INTERNAL_URL,
    doc: 'URL the proxy uses to reach the authenticate service inside the network, when it differs from the public one.',
  },
  {
    key: 'authenticate_callback_path',
    group: 'Services',
    kind: { type: 'url_path' },
    default: '/oauth2/callback',
    services: AUTHN,
    secret: false,
    support: CALLBACK_PATH,
    doc: 'Path of the OAuth 2.0 redirect URI on the authenticate service (register `<authenticate_service_url><path>` with the provider).',
  },
  {
    key: 'authorize_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    support: AUTHORIZE_URL,
    doc: 'URL of a separately run authorize service. Must be unset in all-in-one mode, where authorize runs in-process.',
  },
  {
    key: 'databroker_service_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: CLIENTS,
    secret: false,
    support: DATABROKER_URL,
    doc: 'URL of a separately run databroker (formerly `cache_service_url`). Unset: the databroker in this process.',
  },
  {
    key: 'signout_redirect_url',
    group: 'Services',
    kind: { type: 'url', https: 'optional' },
    services: AUTHN_PROXY,
    secret: false,
    support: SIGN_OUT,
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
    support: COOKIE_SECRET,
    doc: 'Base64 of 32 random bytes that encrypt and sign cookies. Required unless all-in-one.',
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
    kind: { type: 'enum', values: IDP_PROVIDERS },
    services: AUTHN,
    secret: false,
    support: SIGN_IN,
    doc: 'Built-in identity provider by short name. With only `idp_provider_url` set, `oidc` is used.',
  },
  {
    key: 'idp_provider_url',
    group: 'Identity provider',
    kind: { type: 'url', https: 'required' },
    services: AUTHN,
    secret: false,
    support: SIGN_IN,
    doc: "Base URL of the provider's OIDC discovery document, without `/.well-known/openid-configuration`; https (http only on loopback).",
  },
  {
    key: 'idp_client_id',
    group: 'Identity provider',
    kind: { type: 'string' },
    services: AUTHN,
    secret: false,
    support: SIGN_IN,
    doc: 'OAuth 2.0 client id issued by the provider. Required when self-hosting authenticate.',
  },
  {
    key: 'idp_client_secret',
    group: 'Identity provider',
    kind: { type: 'secret_string' },
    services: AUTHN,
    secret: true,
    support: SIGN_IN,
    doc: 'OAuth 2.0 client secret. When self-hosting, set exactly one of this and `idp_client_secret_file`.',
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
        pattern: /^[\x21\x23-\x5b\x5d-\x7e]+$/,
        hint: 'is not a scope (RFC 6749 3.3: printable, no spaces or quotes)',
      },
    },
    default: 'openid,profile,email,offline_access',
    services: AUTHN,
    secret: false,
    support: SIGN_IN,
    doc: 'OAuth 2.0 scopes requested at sign-in; add e.g. `groups` if the provider needs it to send group claims.',
  },
  {
    key: 'idp_request_params',
    group: 'Identity provider',
    kind: { type: 'string_map' },
    aliases: ['ipd_request_params'],
    services: AUTHN,
    secret: false,
    support: SIGN_IN,
    doc: 'Extra parameters for the sign-in request (e.g. `prompt: login`). Also read as `ipd_request_params`; both set and different is an error.',
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
    support: COOKIE,
    doc: 'Domain attribute of the session cookie. Unset: host-only cookies.',
  },
  {
    key: 'cookie_expire',
    group: 'Cookies',
    kind: { type: 'duration' },
    default: '14h',
    services: AUTHN_PROXY,
    secret: false,
    support: COOKIE,
    doc: 'Lifetime of the session cookie and of the server-side session.',
  },
  {
    key: 'cookie_http_only',
    group: 'Cookies',
    kind: { type: 'bool' },
    default: 'true',
    services: AUTHN_PROXY,
    secret: false,
    support: COOKIE,
    doc: 'Hide the session cookie from JavaScript.',
  },
  {
    key: 'cookie_same_site',
    group: 'Cookies',
    kind: { type: 'enum', values: ['', 'strict', 'lax', 'none'] },
    default: '',
    services: AUTHN_PROXY,
    secret: false,
    support: COOKIE,
    doc: 'SameSite attribute of the session cookie: strict, lax, none, or empty for none sent.',
  },
  {
    key: 'signing_key',
    group: 'Identity headers',
    kind: { type: 'signing_key' },
    services: AUTHZ_PROXY,
    secret: true,
    doc: 'PEM (or base64 of PEM) ECDSA or RSA private key that signs the identity assertion; the algorithm follows the key. Ed25519 is not supported.',
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
    support: ISSUER_FORMAT,
    doc: 'The assertion `iss`: the bare host name (`host_only`) or `https://host/` (`uri`).',
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
        pattern: /^[A-Za-z0-9.*-]+$|^\[?[0-9A-Fa-f:.]+\]?$/,
        hint: 'is not a host name; give names such as localhost or app.example.com, not URLs',
      },
    },
    default: 'localhost',
    services: AUTHN_PROXY,
    secret: false,
    support: PROGRAMMATIC_LOGIN,
    doc: 'Host names programmatic login may redirect to; `localhost` also allows loopback addresses.',
  },
];
