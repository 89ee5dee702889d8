import type { Problem } from '../shared/errors.js';
import { parseSource } from './formats.js';
import { checkIdentity, type IdentitySettings } from './parse-identity.js';
import { readIdentityProviders } from './parse-identity-providers.js';
import { parseRoute } from './parse-route.js';
import { fullHash } from '../shared/hash.js';
import { canonicalHostName } from './host-name.js';
import { checkServices, type ServicePlan } from './parse-services.js';
import { checkObservability } from './parse-observability.js';
import type { Secret } from '../shared/secret.js';
import { readCertificates, type CertificatePair } from './parse-tls.js';
import { ParsedValues } from './parsed-values.js';
import { envName, GLOBAL_OPTIONS, KNOWN_GLOBAL_KEYS } from './option-table.js';
import { checkPlaceholders } from './check-placeholders.js';
import { checkSettingsSafety } from './check-settings-safety.js';
import { checkUpstreamTargets } from './check-upstream-targets.js';
import { readOption } from './read-option.js';
import { collectRawValues, resolveFileOptions, type Env, type ReadText } from './sources.js';
import { reportUnsupported } from './unsupported-options.js';
import type { Config, NamedIdentityProvider, RouteSettings } from './types.js';
import { isPlainObject, Reader, type ValueSyntax } from './value-readers.js';
import { isTextDocument } from './properties.js';
import { decodeUtf8Strictly } from './utf8.js';
import { refuseResponseHeaderTemplates } from './header-templates.js';

export type { ReadText } from './sources.js';

/** What parsing returns: a Config when there were no problems, plus every problem and warning. */
export interface ParseResult {
  readonly config: Config | undefined;
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
  /** This parse's clean routes by content: what the next parse may reuse (see `RouteCache`). */
  readonly routeCache: RouteCache;
  /** How many routes this parse validated (`parseRoute` calls): those the previous cache did not hold. */
  readonly routesValidated: number;
}

/**
 * Validated routes by content: the SHA-256 of a route's place (`routes[3]`) and its JSON, to the
 * RouteSettings it gave with no problem and no warning. A reload passes the last good parse's
 * cache back in (`ParseInput.previousRoutes`), so a route that did not change is not validated
 * again: at 10,000 routes that is most of a reload's parse. `parseRoute` reads nothing but the
 * route's own value and place, so the same key always gives the same settings; routes that read
 * files (`*_file` keys) are never cached, since a file may change under the same text.
 */
export type RouteCache = ReadonlyMap<string, RouteSettings>;

/** The options that give listener certificates one by one (`certificates` is read by readCertificates). */
const CERTIFICATE_KEYS = ['certificate', 'certificate_key', 'certificate_file', 'certificate_key_file'];

/** Inputs of parseConfig. */
export interface ParseInput {
  /** The parsed config document (any format), or {} when there is no file. */
  readonly document: unknown;
  /** Environment variables; they win over the file. */
  readonly env: Env;
  readonly readText: ReadText;
  /** The last good parse's `routeCache`, to skip validating unchanged routes. */
  readonly previousRoutes?: RouteCache;
  /**
   * How the document's values are written (see ValueSyntax): `text` for a properties file. When
   * not given, a document parseProperties made is text and any other is typed.
   */
  readonly syntax?: ValueSyntax;
}

/**
 * Turns a config document plus environment into a validated Config. Precedence: environment
 * variable, then file, then the option table's default. Every problem is collected with its key
 * path (or the environment variable's name); nothing half-parsed is returned. Pure apart from
 * `readText`, which reads referenced files.
 */
export function parseConfig(input: ParseInput): ParseResult {
  const reader = new Reader();
  const document = input.document ?? {};
  if (!isPlainObject(document)) {
    reader.problem('', 'the config file must hold a map of options at the top level');
    return {
      config: undefined,
      problems: reader.problems,
      warnings: reader.warnings,
      routeCache: new Map(),
      routesValidated: 0,
    };
  }
  const syntax = input.syntax ?? (isTextDocument(document) ? 'text' : 'typed');
  const raws = collectRawValues(reader, document, input.env, syntax);
  resolveFileOptions(reader, raws, input.readText);
  const values = new ParsedValues(raws);
  for (const option of GLOBAL_OPTIONS) {
    const raw = raws.get(option.key);
    if (raw !== undefined && raw.failed !== true)
      values.set(option.key, readOption(reader, option, raw, input.readText));
  }
  const plan = checkServices(reader, values);
  const metricsBasicAuth = checkObservability(reader, values);
  const beforeCertificates = reader.problems.length;
  const certificates = readCertificates(reader, values, raws.get('certificates'), input.readText);
  // A certificate that was given but refused has its own problem; "none configured" would mislead.
  const certificateRefused =
    reader.problems.length > beforeCertificates || CERTIFICATE_KEYS.some((key) => values.failed(key));
  if (
    plan.servesHttp &&
    values.get('insecure_server') !== true &&
    certificates.length === 0 &&
    !certificateRefused
  ) {
    reader.problem(
      'certificate',
      'no TLS certificate is configured: set certificate and certificate_key (or certificate_file and certificate_key_file, or certificates), or set insecure_server: true to serve plain HTTP',
    );
  }
  const routeCache = new Map<string, RouteSettings>();
  const counted = { validated: 0 };
  const routes = readRoutes(reader, document, input, routeCache, counted);
  const routesValidated = counted.validated;
  const identityProviders = readIdentityProviders(reader, raws.get('identity_providers'), input.readText);
  const identity = checkIdentity(reader, values, routes, identityProviders.names);
  checkSettingsSafety(reader, values);
  refuseResponseHeaderTemplates(
    reader,
    'set_response_headers',
    values.get<Record<string, string>>('set_response_headers') ?? {},
  );
  checkUpstreamTargets(reader, values, routes);
  checkPlaceholders(reader, document, input.env, KNOWN_GLOBAL_KEYS);
  reportUnsupported(reader, values, routes);
  if (reader.problems.length > 0)
    return {
      config: undefined,
      problems: reader.problems,
      warnings: reader.warnings,
      routeCache,
      routesValidated,
    };
  const config = buildConfig(values, {
    ...plan,
    identity,
    identityProviders: identityProviders.providers,
    certificates,
    routes,
    metricsBasicAuth,
  });
  return { config, problems: [], warnings: reader.warnings, routeCache, routesValidated };
}

/** The parts of a Config that need cross-option checks, resolved before assembly. */
interface ResolvedParts extends ServicePlan {
  readonly identity: IdentitySettings;
  readonly identityProviders: Readonly<Record<string, NamedIdentityProvider>>;
  readonly certificates: readonly CertificatePair[];
  readonly routes: readonly RouteSettings[];
  /** `metrics_basic_auth` decoded (`user:password`), when set. */
  readonly metricsBasicAuth: Secret<string> | undefined;
}

/** Assembles the Config from the typed values (called only when there were no problems). */
function buildConfig(values: ParsedValues, parts: ResolvedParts): Config {
  const get = <T>(key: string): T => values.get<T>(key) as T;
  const optional = <K extends string>(key: K, configKey: string = key): Record<string, unknown> =>
    values.get(key) === undefined ? {} : { [configKey]: values.get(key) };
  return {
    services: parts.services,
    all_in_one: parts.allInOne,
    ...optional('authenticate_service_url'),
    ...optional('authenticate_internal_service_url'),
    authenticate_callback_path: get('authenticate_callback_path'),
    ...optional('authorize_service_url'),
    ...optional('authorize_internal_service_url'),
    ...optional('databroker_service_url'),
    ...optional('signout_redirect_url'),
    ...optional('shared_secret'),
    ...optional('cookie_secret'),
    cookie_name: get('cookie_name'),
    ...optional('cookie_domain'),
    cookie_expire_ms: get('cookie_expire'),
    cookie_http_only: get('cookie_http_only'),
    cookie_same_site: get('cookie_same_site'),
    ...parts.identity,
    ...optional('idp_client_id'),
    ...optional('idp_client_secret'),
    ...optional('idp_scopes'),
    idp_request_params: values.get('idp_request_params') ?? {},
    idp_trust_unverified_email: get('idp_trust_unverified_email'),
    ...(Object.keys(parts.identityProviders).length === 0
      ? {}
      : { identity_providers: parts.identityProviders }),
    ...optional('signing_key'),
    jwt_claims_headers: values.get('jwt_claims_headers') ?? {},
    ...optional('jwt_groups_filter'),
    jwt_issuer_format: get('jwt_issuer_format'),
    pass_identity_headers: get('pass_identity_headers'),
    programmatic_redirect_domain_whitelist: get<string[]>('programmatic_redirect_domain_whitelist').map(
      (host) => canonicalHostName(host) ?? host,
    ),
    address: get('address'),
    insecure_server: get('insecure_server'),
    use_proxy_protocol: get('use_proxy_protocol'),
    xff_num_trusted_hops: get('xff_num_trusted_hops'),
    log_level: get('log_level'),
    ...optional('proxy_log_level'),
    grpc_address: get('grpc_address'),
    grpc_insecure: get('grpc_insecure'),
    grpc_client_timeout_ms: get('grpc_client_timeout'),
    authorize_timeout_ms: get('authorize_timeout'),
    decision_token_lifetime_ms: get('decision_token_lifetime'),
    envoy_admin_address: get('envoy_admin_address'),
    ...optional('metrics_address'),
    ...(parts.metricsBasicAuth === undefined ? {} : { metrics_basic_auth: parts.metricsBasicAuth }),
    tracing_sampling_rate: get('tracing_sampling_rate'),
    ...optional('otel_exporter_otlp_endpoint'),
    otel_exporter_otlp_protocol: get('otel_exporter_otlp_protocol'),
    ...optional('http_redirect_addr'),
    default_upstream_timeout_ms: get('default_upstream_timeout'),
    timeout_read_ms: get('timeout_read'),
    timeout_idle_ms: get('timeout_idle'),
    ...optional('set_response_headers'),
    certificates: parts.certificates,
    ...optional('certificate_authority', 'certificate_authority_pem'),
    ...(values.get<string>('tls_derive') === undefined
      ? {}
      : { tls_derive: values.get<string>('tls_derive')?.toLowerCase() }),
    databroker_storage_type: get('databroker_storage_type'),
    ...optional('databroker_storage_connection_string'),
    databroker_outage_grace_ms: get('databroker_outage_grace'),
    routes: parts.routes,
  } as Config;
}

function readRoutes(
  reader: Reader,
  document: Record<string, unknown>,
  input: ParseInput,
  cache: Map<string, RouteSettings>,
  counted: { validated: number },
): RouteSettings[] {
  const { env, readText, previousRoutes } = input;
  const routes: RouteSettings[] = [];
  for (const key of ['policy', 'routes'] as const) {
    let raw = document[key];
    let path: string = key;
    const fromEnv = env[envName(key)];
    if (fromEnv !== undefined && fromEnv !== '') {
      raw = fromEnv;
      path = envName(key);
    }
    if (typeof raw === 'string') raw = decodeRoutesText(reader, path, raw);
    if (raw === undefined || raw === null) continue;
    if (key === 'policy') reader.warn(path, 'the `policy` key is deprecated; rename it to `routes`');
    if (!Array.isArray(raw)) {
      reader.problem(path, 'expected a list of routes');
      continue;
    }
    raw.forEach((route: unknown, index) => {
      const at = `${key}[${index}]`;
      const parsed = parseRouteWithCache(reader, at, route, readText, previousRoutes, cache, counted);
      if (parsed !== undefined) routes.push(parsed);
    });
  }
  return routes;
}

/**
 * `parseRoute`, or the settings `previous` holds for the same place and content (see RouteCache).
 * Records each clean, file-free route in `cache` for the next parse, and counts each route it
 * validates in `counted`.
 */
function parseRouteWithCache(
  reader: Reader,
  path: string,
  raw: unknown,
  readText: ReadText,
  previous: RouteCache | undefined,
  cache: Map<string, RouteSettings>,
  counted: { validated: number },
): RouteSettings | undefined {
  const cacheable = isPlainObject(raw) && !Object.keys(raw).some((name) => name.endsWith('_file'));
  const key = cacheable ? fullHash(`${path}\u0000${JSON.stringify(raw)}`) : undefined;
  const known = key === undefined ? undefined : previous?.get(key);
  if (known !== undefined && key !== undefined) {
    cache.set(key, known);
    return known;
  }
  const before = reader.problems.length + reader.warnings.length;
  counted.validated += 1;
  const parsed = parseRoute(reader, path, raw, readText);
  if (parsed !== undefined && key !== undefined && reader.problems.length + reader.warnings.length === before)
    cache.set(key, parsed);
  return parsed;
}

/**
 * Routes written as text (an environment variable, a properties file): JSON, or base64 of YAML
 * or JSON, as the peer accepts in its POLICY variable. The YAML is parsed as config files are
 * (`parseSource`), with the same nesting and alias limits.
 */
function decodeRoutesText(reader: Reader, path: string, text: string): unknown {
  if (text.trim() === '') return undefined;
  // As a JSON file is parsed, with the same nesting limit; a list that fails as JSON says why.
  const json = parseSource(text, 'json');
  if (!('error' in json)) return json.document;
  if (text.trimStart().startsWith('[')) return reader.problem(path, json.error);
  const compact = text.replace(/\s+/g, '');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) {
    // Text that is not UTF-8 once decoded was not base64 of YAML: the message below says so.
    const text = decodeUtf8Strictly(Buffer.from(compact, 'base64'));
    const decoded = typeof text === 'string' ? parseSource(text, 'yaml') : { error: 'not UTF-8' };
    if (!('error' in decoded) && Array.isArray(decoded.document)) return decoded.document;
  }
  return reader.problem(path, 'expected a JSON list of routes, or base64 of a YAML or JSON list');
}
