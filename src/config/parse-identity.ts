import type { ServicePlan } from './parse-services.js';
import type { ParsedValues } from './parsed-values.js';
import { IDP_PROVIDERS, type IdpProvider } from './types.js';
import type { Reader } from './value-readers.js';

/** Providers with no fixed discovery URL: `idp_provider_url` is required with them. */
const NEEDS_URL: readonly IdpProvider[] = ['oidc', 'okta', 'ping', 'auth0', 'cognito'];
const DISCOVERY_SUFFIX = '/.well-known/openid-configuration';
const IDP_KEYS = [
  'idp_provider',
  'idp_provider_url',
  'idp_client_id',
  'idp_client_secret',
  'idp_request_params',
];

/** The identity-provider settings after the cross-checks. */
export interface IdentitySettings {
  readonly idp_provider?: IdpProvider;
  readonly idp_provider_url?: URL;
}

/**
 * Checks the identity-provider settings (spec section 2). Self-hosting authenticate (an
 * `authenticate_service_url`, with authenticate running here) needs `idp_client_id`, exactly one
 * of `idp_client_secret` and `idp_client_secret_file`, and `idp_provider` or `idp_provider_url`
 * (alone it means `oidc`). A provider URL ending in the discovery suffix is trimmed with a
 * warning. With the hosted authenticate service the settings are unused, so setting them warns.
 */
export function checkIdentity(reader: Reader, values: ParsedValues, plan: ServicePlan): IdentitySettings {
  const url = normaliseProviderUrl(reader, values);
  const provider = values.get<IdpProvider>('idp_provider');
  const selfHosted = values.get('authenticate_service_url') !== undefined;
  if (!selfHosted) {
    for (const key of IDP_KEYS.filter((name) => values.explicit(name))) {
      reader.warn(
        values.path(key),
        'is ignored: authenticate_service_url is unset, so the hosted authenticate service signs users in',
      );
    }
    return withUrl(provider, url);
  }
  if (!plan.services.includes('authenticate')) return withUrl(provider, url);
  if (values.get('idp_client_id') === undefined && !values.failed('idp_client_id')) {
    reader.problem(
      'idp_client_id',
      'is required when self-hosting authenticate (authenticate_service_url is set)',
    );
  } else if (values.get<string>('idp_client_id')?.trim() === '') {
    reader.problem(
      values.path('idp_client_id'),
      'is empty; give the client id issued by the identity provider',
    );
  }
  if (values.get('idp_client_secret') === undefined && !values.failed('idp_client_secret')) {
    reader.problem(
      'idp_client_secret',
      'set exactly one of idp_client_secret and idp_client_secret_file when self-hosting authenticate',
    );
  }
  if (provider === undefined && url === undefined) {
    if (!values.failed('idp_provider') && !values.failed('idp_provider_url')) {
      reader.problem(
        'idp_provider',
        `set idp_provider (one of ${IDP_PROVIDERS.join(', ')}) or idp_provider_url when self-hosting authenticate`,
      );
    }
    return {};
  }
  if (
    provider !== undefined &&
    NEEDS_URL.includes(provider) &&
    url === undefined &&
    !values.failed('idp_provider_url')
  ) {
    reader.problem('idp_provider_url', `is required with idp_provider ${provider}: its discovery base URL`);
  }
  return withUrl(provider ?? 'oidc', url);
}

function withUrl(provider: IdpProvider | undefined, url: URL | undefined): IdentitySettings {
  return {
    ...(provider === undefined ? {} : { idp_provider: provider }),
    ...(url === undefined ? {} : { idp_provider_url: url }),
  };
}

function normaliseProviderUrl(reader: Reader, values: ParsedValues): URL | undefined {
  const url = values.get<URL>('idp_provider_url');
  if (url === undefined) return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith(DISCOVERY_SUFFIX)) return url;
  const base = new URL(url.href);
  base.pathname = path.slice(0, -DISCOVERY_SUFFIX.length) || '/';
  reader.warn(
    values.path('idp_provider_url'),
    `ends with ${DISCOVERY_SUFFIX}; using ${base.href} (give the base URL without that suffix)`,
  );
  return base;
}
