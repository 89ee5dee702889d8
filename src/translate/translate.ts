import type { Problem } from '../shared/errors.js';
import type { Config, RouteSettings } from '../config/types.js';
import type { IR, IRAuthorize, IRInternal, IRListener, IRRoute, IRPathMatch } from '../ir/types.js';
import { fromPort, placeHost } from './hosts.js';
import { buildCluster } from './upstreams.js';
import { assembleRoutePolicy } from './route-policy.js';
import { routeIdentity, routeMatch } from './route-identity.js';
import { forwards, responseHeaderRewrites, routeAnswer } from './answers.js';
import { translateTracing } from './tracing.js';
import { translateAccessLog } from './access-log.js';
import { identityProviderFor, NO_IDENTITY_PROVIDER } from '../config/identity-provider.js';
import { httpRedirect, listenerCertificates } from './edge-tls.js';
import type { FallbackCertificate } from '../pki/fallback-tls.js';
import { tcpShadowed, translateTcpRoute } from './tcp-routes.js';
import { createShadowIndex, type Shadowing } from './shadowing.js';
import { connectAuthority } from '../config/parse-url.js';
import { translateObservability, translateProcess, translateSignIn } from './services.js';
import { withDecisionName } from './decision-name.js';
import { literalHeaders, routeHeaders } from './request-headers.js';
import {
  assembleClusters,
  assembleHosts,
  globalsKey,
  type RouteOutcome,
  type RoutesMemo,
  type TranslatedRoute,
} from './reuse.js';

/** Inputs translate needs from the outside world, injected so translate stays pure. */
export interface TranslateOptions {
  /** PEM bundle of the system trust store, used for HTTPS upstreams without a custom CA. */
  readonly systemCaFile: string;
  /** Where Envoy reaches Portcullis (ext_authz) and the JWKS to publish (from-file.ts decides it). */
  readonly internal?: IRInternal;
  /** The self-signed certificate for names no configured one covers (edge-tls.ts); none: configured only. */
  readonly fallbackCertificate?: FallbackCertificate;
}

/**
 * What translate returns: the IR when there were no problems, and every problem found; with the
 * IR, what the next translate may reuse (`memo`). `routesTranslated` counts the routes this call
 * translated (those `previous` did not hold), for the reload log.
 */
export interface TranslateResult {
  readonly ir: IR | undefined;
  readonly problems: readonly Problem[];
  readonly memo: RoutesMemo | undefined;
  readonly routesTranslated: number;
}

/**
 * Default security headers when `set_response_headers` is unset; HSTS only when TLS is served, and
 * without `preload`: asking browsers to hard-code the domain (hstspreload.org) is the operator's
 * decision, made by setting the header in `set_response_headers`.
 */
const DEFAULT_RESPONSE_HEADERS = { 'X-Frame-Options': 'SAMEORIGIN', 'X-XSS-Protection': '1; mode=block' };
const HSTS = { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' };

/**
 * Config -> IR: groups routes into virtual hosts, names each route and its cluster by the route's
 * identity (what Envoy matches it on: route-identity.ts, so upstream, health, timeout, header and
 * policy changes keep every name), applies defaults (timeouts, host rewriting, security headers)
 * and checks cross-route rules (no route that an earlier one with the same host and matcher
 * shadows or whose matcher covers it, no route on the authenticate host). A pure function of its
 * arguments: same Config and options, same IR (virtual hosts sorted by name with the catch-all
 * last, clusters sorted by name), with or without `previous`. Problems come in config order, each
 * with its key path; with any problem there is no IR.
 *
 * `previous` is the last good translate's memo (reuse.ts): a route whose settings object and
 * global settings are unchanged is not translated again and gives the identical IR route and
 * cluster objects, and a host all of whose routes are unchanged the identical virtual host. The
 * checks across routes run over every route on every call, so they are as exact as a full build.
 */
export function translate(config: Config, options: TranslateOptions, previous?: RoutesMemo): TranslateResult {
  const problems: Problem[] = [];
  const routes: TranslatedRoute[] = [];
  /** The key path of the first route with each match key, for the routes it shadows to name. */
  const firstWithMatch = new Map<string, string>();
  /** Earlier routes by host, for a later route an earlier prefix, path or regex covers. */
  const shadows = createShadowIndex();
  const ownHost = config.authenticate_service_url?.hostname.toLowerCase();
  const authorize = translateAuthorize(config, options);
  const globals = globalsKey(config, options.systemCaFile, authorize);
  const reusable = previous?.globals === globals ? previous.routes : undefined;
  const outcomes = new Map<RouteSettings, RouteOutcome>();
  let routesTranslated = 0;
  for (const settings of config.routes) {
    if (settings.from_host === ownHost) problems.push(onAuthenticateHost(settings, ownHost));
    let outcome = reusable?.get(settings) ?? outcomes.get(settings);
    if (outcome === undefined) {
      outcome = translateSettings(settings, config, options, authorize);
      routesTranslated += 1;
    }
    outcomes.set(settings, outcome);
    const { identity, tcpTarget, placed } = outcome;
    const earlier = firstWithMatch.get(identity.matchKey);
    if (earlier === undefined) firstWithMatch.set(identity.matchKey, settings.source_path);
    if (tcpTarget !== undefined) {
      // The bastion form's target host is a virtual host of its own, which must not be that one either.
      if (tcpTarget !== settings.from_host && tcpTarget === ownHost)
        problems.push(onAuthenticateHost(settings, tcpTarget));
      if (earlier !== undefined) problems.push(tcpShadowed(settings, earlier));
      problems.push(...outcome.problems);
      routes.push(...placed);
      continue;
    }
    problems.push(...outcome.problems);
    const { match } = (placed[0] as TranslatedRoute).route;
    const covered = shadows.visit(settings.from_host, match, settings.source_path);
    if (earlier !== undefined) problems.push(shadowed(settings, earlier, match));
    else if (covered !== undefined) problems.push(coveredBy(settings, covered));
    routes.push(...placed);
  }
  if (problems.length > 0) return { ir: undefined, problems, memo: undefined, routesTranslated };
  const clusters = assembleClusters(routes, previous?.clusters);
  const hosts = assembleHosts(routes, previous?.hosts);
  return {
    ir: {
      listener: buildListener(config, options, routes),
      virtualHosts: [...hosts.values()],
      clusters: [...clusters.values()],
      responseHeaders: globalResponseHeaders(config.set_response_headers, !config.insecure_server),
      authorize,
      internal: options.internal,
      ...(config.http_redirect_addr === undefined
        ? {}
        : {
            httpRedirect: httpRedirect(config.http_redirect_addr, config.address, config.use_proxy_protocol),
          }),
      process: translateProcess(config),
      observability: translateObservability(config),
      signIn: translateSignIn(config),
    },
    problems: [],
    memo: { globals, routes: outcomes, hosts, clusters },
    routesTranslated,
  };
}

/** What the authorize service needs beyond each route's policy (IRAuthorize). */
function translateAuthorize(config: Config, options: TranslateOptions): IRAuthorize {
  return {
    claimHeaders: config.jwt_claims_headers,
    authenticateUrl: config.authenticate_service_url?.href.replace(/\/$/, ''),
    cookieName: config.cookie_name,
    issuerFormat: config.jwt_issuer_format,
    groupsFilter: config.jwt_groups_filter,
    decisionTokenLifetimeMs: options.internal === undefined ? 0 : config.decision_token_lifetime_ms,
  };
}

/**
 * One route's settings translated on their own: its identity, its IR route(s) placed in their
 * virtual hosts (with its decision name when the fast path is on), its cluster and its own
 * problems, which the caller reports at their place among the checks across routes.
 */
function translateSettings(
  settings: RouteSettings,
  config: Config,
  options: TranslateOptions,
  authorize: IRAuthorize,
): RouteOutcome {
  const identity = routeIdentity(settings);
  const problems: Problem[] = [];
  if (settings.kind === 'tcp') {
    const tcpTarget = connectAuthority(settings.from).host;
    const placed = translateTcpRoute(settings, identity.id, config, options.systemCaFile, problems);
    return { identity, tcpTarget, placed, problems };
  }
  const translated = translateRoute(settings, identity.id, config, options, problems);
  const placed =
    authorize.decisionTokenLifetimeMs > 0
      ? {
          ...translated,
          route: withDecisionName(translated.route, translated.vhost, translated.domains, authorize),
        }
      : translated;
  return { identity, tcpTarget: undefined, placed: [placed], problems };
}

/**
 * A route on the authenticate host: Envoy sends every path of that host to Portcullis's own HTTP
 * server (sign-in, callback, sign-out), so the route could never be reached.
 */
function onAuthenticateHost(settings: RouteSettings, host: string): Problem {
  return {
    path: settings.source_path,
    message: `from host ${host} is the authenticate_service_url host, which Portcullis answers itself (sign-in, callback, sign-out); give the route or authenticate_service_url another host`,
  };
}

/**
 * A route that an earlier one with the same host and matcher shadows: Envoy takes the first route
 * that matches, so this one would never see a request (whatever its destinations or policy).
 */
function shadowed(settings: RouteSettings, earlier: string, match: IRPathMatch): Problem {
  return {
    path: settings.source_path,
    message: `never matches: ${earlier} comes first with the same from host (${settings.from_host}) and ${match.kind} matcher (${JSON.stringify(match.value)}), and Envoy takes the first route that matches; remove one or change its matcher`,
  };
}

/**
 * A route that an earlier one on the same host covers (shadowing.ts): it would never see a
 * request, so its policy would never apply; with a stricter policy, its paths would be open.
 */
function coveredBy(settings: RouteSettings, covered: Shadowing): Problem {
  return {
    path: settings.source_path,
    message: `never matches: ${covered.earlier} comes first with the same from host (${settings.from_host}) and ${covered.because}, and Envoy takes the first route that matches, so this route and its policy would never apply; put the more specific route first or change its matcher`,
  };
}

/** Translates one route with id `id`; problems with its upstreams are added to `problems`. */
function translateRoute(
  settings: RouteSettings,
  id: string,
  config: Config,
  options: TranslateOptions,
  problems: Problem[],
): TranslatedRoute {
  const placement = placeHost(settings.from_host);
  const clusterName = `route-${id}`;
  return {
    vhost: placement.vhost,
    domains: placement.domains,
    route: buildRoute(settings, id, clusterName, placement.authorityRegex, config),
    cluster: forwards(settings)
      ? buildCluster(settings, clusterName, options.systemCaFile, problems)
      : undefined,
  };
}

/** The IR route of one route's settings: its match, rewrites, timeouts, headers and policy. */
function buildRoute(
  settings: RouteSettings,
  id: string,
  clusterName: string,
  authorityRegex: string | undefined,
  config: Config,
): IRRoute {
  const match = routeMatch(settings);
  const toPath = settings.to[0]?.pathname ?? '/';
  const impliedRewrite =
    toPath !== '/' && settings.prefix_rewrite === undefined && settings.regex_rewrite_pattern === undefined
      ? toPath
      : undefined;
  const websockets = settings.allow_websockets;
  return {
    id,
    name: settings.name ?? clusterName,
    sourcePath: settings.source_path,
    match,
    authorityRegex,
    ...fromPort(settings.from),
    clusterName,
    timeoutMs: settings.timeout_ms ?? (websockets ? 0 : config.default_upstream_timeout_ms),
    idleTimeoutMs: settings.idle_timeout_ms ?? (websockets ? 0 : undefined),
    prefixRewrite: settings.prefix_rewrite ?? impliedRewrite,
    regexRewrite:
      settings.regex_rewrite_pattern !== undefined
        ? { pattern: settings.regex_rewrite_pattern, substitution: settings.regex_rewrite_substitution ?? '' }
        : undefined,
    hostRewrite:
      settings.host_rewrite !== undefined
        ? { kind: 'literal', host: settings.host_rewrite }
        : { kind: settings.preserve_host_header ? 'preserve' : 'auto' },
    allowWebsockets: websockets,
    ...routeHeaders(settings, settings.remove_request_headers, forwards(settings)),
    ...responseHeaderRewrites(settings),
    public: settings.allow_public_unauthenticated_access,
    policy: assembleRoutePolicy(settings),
    passIdentityHeaders: settings.pass_identity_headers ?? config.pass_identity_headers,
    idpId: identityProviderFor(config, settings)?.id ?? NO_IDENTITY_PROVIDER,
    ...(settings.pass_request_identity_headers === undefined
      ? {}
      : { passRequestIdentityHeaders: [...settings.pass_request_identity_headers].sort() }),
    ...routeAnswer(settings),
  };
}

function buildListener(
  config: Config,
  options: TranslateOptions,
  routes: readonly TranslatedRoute[],
): IRListener {
  const separator = config.address.lastIndexOf(':');
  const host = config.address.slice(0, separator).replace(/^\[|\]$/g, '');
  return {
    name: config.insecure_server ? 'http-ingress' : 'https-ingress',
    host: host === '' ? '0.0.0.0' : host,
    port: Number(config.address.slice(separator + 1)),
    tls: config.insecure_server
      ? undefined
      : { certificates: listenerCertificates(config, options.fallbackCertificate) },
    useProxyProtocol: config.use_proxy_protocol,
    xffNumTrustedHops: config.xff_num_trusted_hops,
    requestTimeoutMs: config.timeout_read_ms,
    idleTimeoutMs: config.timeout_idle_ms,
    ...translateTracing(config, options.systemCaFile),
    ...translateAccessLog(config),
    ...(routes.some(({ route }) => route.responseHeaderRewrites !== undefined)
      ? { rewritesResponseHeaders: true as const }
      : {}),
  };
}

function globalResponseHeaders(
  configured: Readonly<Record<string, string>> | undefined,
  tls: boolean,
): Record<string, string> {
  if (configured === undefined)
    return tls ? { ...DEFAULT_RESPONSE_HEADERS, ...HSTS } : { ...DEFAULT_RESPONSE_HEADERS };
  if (Object.keys(configured).some((key) => key.toLowerCase() === 'disable')) return {};
  return literalHeaders(configured);
}
