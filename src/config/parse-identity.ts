import { FLOW_REQUEST_PARAMS, isFlowRequestParam } from '../shared/flow-params.js';
import type { ParsedValues } from './parsed-values.js';
import { DEFAULT_PROVIDER_NAME } from './identity-provider.js';
import type { IdpProvider, RouteSettings } from './types.js';
import { closestKey, type Reader } from './value-readers.js';

/** Providers with no fixed discovery URL: `idp_provider_url` is required with them. */
const NEEDS_URL: readonly IdpProvider[] = ['oidc', 'okta', 'ping', 'auth0', 'cognito'];
const DISCOVERY_SUFFIX = '/.well-known/openid-configuration';

/** The identity-provider settings after the cross-checks. */
export interface IdentitySettings {
  readonly idp_provider?: IdpProvider;
  readonly idp_provider_url?: URL;
}

/**
 * Checks sign-in (spec section 5). No hosted authenticate service exists, so every route
 * that needs a user (any route that is not `allow_public_unauthenticated_access`) needs a complete
 * sign-in setup: `authenticate_service_url`, `idp_provider` or `idp_provider_url` (alone it means
 * `oidc`), and a client id and secret (the route's own, or the global ones). What is missing is
 * said in ONE problem, at the first such route, listing every setting to add. Identity-provider
 * settings with no route that needs them are fine. Also checks `authenticate_service_url` itself
 * (see checkAuthenticateUrl), refuses `idp_request_params` that set the flow's own parameters (see
 * checkRequestParams) and trims a provider URL given with the discovery suffix (a warning). A
 * route's `identity_provider` must name one of `named` (the names `identity_providers` gives) or `default`; a route on a named provider
 * needs only `authenticate_service_url` from the global settings.
 */
export function checkIdentity(
  reader: Reader,
  values: ParsedValues,
  routes: readonly RouteSettings[],
  named: readonly string[] = [],
): IdentitySettings {
  const settings = checkProviderSettings(reader, values);
  checkAuthenticateUrl(reader, values, routes);
  checkRouteProviders(reader, routes, named);
  reportMissingSignIn(reader, values, routes);
  if (values.get('cookie_same_site') === 'none' && values.get('insecure_server') === true) {
    reader.problem(
      values.path('cookie_same_site'),
      'none needs the Secure attribute (browsers drop a SameSite=None cookie without it), but with insecure_server: true cookies are not Secure; use lax or strict',
    );
  }
  return settings;
}

/**
 * The checks one provider's settings get, the global `idp_*` ones or an `identity_providers`
 * entry read under the same keys (parse-identity-providers.ts), so both follow one rule: the
 * discovery suffix trimmed from the URL, no flow parameters in the request parameters, no empty
 * client id, a URL for providers without a fixed one. Messages name the key each value came from.
 */
export function checkProviderSettings(reader: Reader, values: ParsedValues): IdentitySettings {
  const url = normaliseProviderUrl(reader, values);
  const provider = values.get<IdpProvider>('idp_provider');
  checkRequestParams(reader, values);
  if (values.get<string>('idp_client_id')?.trim() === '') {
    reader.problem(
      values.path('idp_client_id'),
      'is empty; give the client id issued by the identity provider',
    );
  }
  if (
    provider !== undefined &&
    NEEDS_URL.includes(provider) &&
    url === undefined &&
    !values.failed('idp_provider_url')
  ) {
    reader.problem(
      values.path('idp_provider_url'),
      `is required with ${values.path('idp_provider')} ${provider}: its discovery base URL`,
    );
  }
  if (provider === undefined && url === undefined) return {};
  return {
    idp_provider: provider ?? 'oidc',
    ...(url === undefined ? {} : { idp_provider_url: url }),
  };
}

/**
 * A route's `identity_provider` must name an entry of `identity_providers` (or `default`, the
 * global keys' provider): an unknown name would otherwise leave the route on another provider
 * than the one meant. The error lists the names there are.
 */
function checkRouteProviders(
  reader: Reader,
  routes: readonly RouteSettings[],
  named: readonly string[],
): void {
  const names = [DEFAULT_PROVIDER_NAME, ...[...named].sort()];
  for (const route of routes) {
    const name = route.identity_provider;
    if (name === undefined || names.includes(name)) continue;
    const hint = closestKey(name, names);
    reader.problem(
      `${route.source_path}.identity_provider`,
      `"${name}" is not a defined identity provider${hint === undefined ? '' : ` (did you mean ${hint}?)`}; the defined ones are ${names.join(', ')} (add it under identity_providers, or spec.identityProviders of the Portcullis object)`,
    );
  }
}

/**
 * The one problem for routes that need a user while sign-in is incomplete: at the first such route,
 * naming the settings to add and how many other routes are affected. Settings that were given but
 * refused already have their own problem and are not asked for again.
 */
function reportMissingSignIn(reader: Reader, values: ParsedValues, routes: readonly RouteSettings[]): void {
  const given = (key: string): boolean => values.get(key) !== undefined || values.failed(key);
  const hasProvider = given('idp_provider') || given('idp_provider_url');
  // A named provider is complete on its own (parse-identity-providers.ts); only the service URL is shared.
  const usesDefault = (route: RouteSettings): boolean =>
    route.identity_provider === undefined || route.identity_provider === DEFAULT_PROVIDER_NAME;
  const needing = routes.filter((route) => !route.allow_public_unauthenticated_access);
  const unmet = needing
    .map((route) => {
      const missing: string[] = [];
      if (!given('authenticate_service_url')) missing.push('authenticate_service_url');
      if (!usesDefault(route)) return { route, missing };
      if (!hasProvider) missing.push('idp_provider_url (or idp_provider)');
      // A route's own client needs both of its keys (checked with the route); they replace the global ones.
      if (route.idp_client_id === undefined) {
        if (!given('idp_client_id')) missing.push('idp_client_id');
        if (!given('idp_client_secret')) missing.push('idp_client_secret (or idp_client_secret_file)');
      }
      return { route, missing };
    })
    .filter(({ missing }) => missing.length > 0);
  const first = unmet[0];
  if (first === undefined) return;
  const others = unmet.length - 1;
  const also =
    others === 0 ? '' : others === 1 ? ' (as does 1 other route)' : ` (as do ${others} other routes)`;
  reader.problem(
    first.route.source_path,
    `needs a signed-in user${also}, but sign-in is not configured: set ${joinAnd(first.missing)}`,
  );
}

/**
 * `authenticate_service_url` is where browsers sign in, served through Envoy's listener: https, or
 * http only with `insecure_server: true` (the listener is then plain HTTP, as in the local demo on
 * *.localhost); an origin with no path, query or fragment (the service's paths are fixed); and a
 * host of its own, since Envoy sends every path of that host to the authenticate service, so a
 * route on the same host would never be reached.
 */
function checkAuthenticateUrl(reader: Reader, values: ParsedValues, routes: readonly RouteSettings[]): void {
  const url = values.get<URL>('authenticate_service_url');
  if (url === undefined) return;
  const path = values.path('authenticate_service_url');
  if (url.protocol === 'http:' && values.get('insecure_server') !== true) {
    reader.problem(
      path,
      `"${url.href}" must use https: plain http is allowed only with insecure_server: true, where the listener serves plain HTTP`,
    );
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    reader.problem(
      path,
      `"${url.href}" must be an origin without a path, query or fragment (such as ${url.origin}): the sign-in paths on it are fixed`,
    );
  }
  const host = url.hostname.toLowerCase();
  const clash = routes.find((route) => route.from_host === host);
  if (clash !== undefined) {
    reader.problem(
      path,
      `has the host ${host} of ${clash.source_path}: the authenticate service needs a host no route uses (such as authenticate.example.com), since Portcullis answers every path on it`,
    );
  }
}

/**
 * `idp_request_params` may add to the sign-in request but not set what the flow sets itself
 * (shared/flow-params.ts): such an entry used to be dropped silently, so the operator believed it
 * applied. Each one is an error at `idp_request_params.<name>` (or the spelling or environment
 * variable it came from) saying where the value comes from instead.
 */
function checkRequestParams(reader: Reader, values: ParsedValues): void {
  const params = values.get<Readonly<Record<string, string>>>('idp_request_params') ?? {};
  const path = values.path('idp_request_params');
  for (const name of Object.keys(params).filter(isFlowRequestParam)) {
    const instead =
      name === 'scope'
        ? `use ${values.path('idp_scopes')} for the scopes`
        : name === 'client_id'
          ? `use ${values.path('idp_client_id')} for the client`
          : name === 'redirect_uri'
            ? 'the redirect URI is authenticate_service_url with authenticate_callback_path'
            : 'Portcullis sets it for every sign-in';
    reader.problem(
      `${path}.${name}`,
      `is set by the sign-in flow itself (${instead}); remove it (${path} cannot set any of ${FLOW_REQUEST_PARAMS.join(', ')})`,
    );
  }
}

/** `a`, `a and b`, `a, b and c`. */
function joinAnd(items: readonly string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1) ?? ''}`;
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
