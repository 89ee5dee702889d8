import type { Problem } from '../shared/errors.js';
import type { Config, RouteSettings } from '../config/types.js';
import type {
  IR,
  IRCluster,
  IRInternal,
  IRListener,
  IRRoute,
  IRVirtualHost,
  IRPathMatch,
  IRHostRewrite,
} from '../ir/types.js';
import { placeHost } from './hosts.js';
import { applyRouteChanges, type TranslatedRoute, type TranslatedRoutes } from './route-changes.js';
import { buildCluster } from './upstreams.js';
import { assembleRoutePolicy } from './route-policy.js';
import { groupHosts } from './host-grouping.js';
import { orderByRouteId, routeIdLead } from './route-id-order.js';
import { routeId } from './route-identity.js';
import { concatFlat } from '../shared/flat-string.js';

/** Inputs translate needs from the outside world, injected so translate stays pure. */
export interface TranslateOptions {
  /** PEM bundle of the system trust store, used for HTTPS upstreams without a custom CA. */
  readonly systemCaFile: string;
  /** Where Envoy reaches Portcullis (ext_authz) and the JWKS to publish; decided by the runtime. */
  readonly internal?: IRInternal;
}

export interface TranslateResult {
  readonly ir: IR | undefined;
  readonly problems: readonly Problem[];
  /**
   * How many routes kept their earlier translation (the same IR objects as the last good IR). None
   * means every IR object is new, so the later stages, which reuse their work by identity of IR
   * objects, have nothing to find and can skip looking (see `CompileOptions.reuse`).
   */
  readonly reusedRoutes: number;
  /**
   * Indexes into `ir.clusters` in the order translate made the clusters, which is their order in
   * memory (route order; the list itself is sorted by route id, a hash, so in no memory order at
   * all). A stage that reads every cluster reads them fastest in this order: at 10,000 routes,
   * walking them in name order misses the cache on nearly every object (see CompileOptions).
   * Undefined when the translation was made from the last one (only a few clusters are new).
   */
  readonly clusterBuildOrder: Int32Array | undefined;
  /**
   * The same for hosts: the virtual host translate made k-th (the k-th distinct host in route
   * order) sits at place `hostBuildOrder[k]` of `ir.virtualHosts`, which is sorted by name. Host
   * names sort in no relation to where the hosts were written (a config lists its hosts in any
   * order), so a stage that reads every host and its routes reads them fastest in this order.
   * Undefined when the translation was made from the last one.
   */
  readonly hostBuildOrder: Int32Array | undefined;
}

/** Default security headers when `set_response_headers` is unset; HSTS only when TLS is served. */
const DEFAULT_RESPONSE_HEADERS = { 'X-Frame-Options': 'SAMEORIGIN', 'X-XSS-Protection': '1; mode=block' };
const HSTS = { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains; preload' };

/**
 * Config -> IR: groups routes into virtual hosts, derives stable ids and names, applies defaults
 * (timeouts, host rewriting, security headers) and checks cross-route rules (no two routes with
 * the same id). Deterministic: same Config, same IR. Each instance remembers its last successful
 * translation, and a config that changed a few routes in place is translated from it
 * (`applyRouteChanges`), with the same result as from scratch.
 */
export class Translator {
  private last: TranslatedRoutes | undefined;
  /** Translations made from the last one and the changed routes alone: for tests and metrics. */
  fromChanges = 0;

  translate(config: Config, options: TranslateOptions): TranslateResult {
    const result = translateFrom(this.last, config, options);
    if (result.fromChanges) this.fromChanges += 1;
    // A failed translation keeps the last good one: the reload that fixes the config starts from it.
    if (result.state !== undefined) this.last = result.state;
    return {
      ir: result.ir,
      problems: result.problems,
      reusedRoutes: result.reusedRoutes,
      clusterBuildOrder: result.clusterBuildOrder,
      hostBuildOrder: result.hostBuildOrder,
    };
  }
}

const translator = new Translator();

/** `Translator.translate` on the process's one translator (what the reload pipeline uses). */
export function translate(config: Config, options: TranslateOptions): TranslateResult {
  return translator.translate(config, options);
}

function translateFrom(
  lastTranslation: TranslatedRoutes | undefined,
  config: Config,
  options: TranslateOptions,
): TranslateResult & { readonly state: TranslatedRoutes | undefined; readonly fromChanges?: boolean } {
  const context = routeContext(config, options);
  const changed =
    lastTranslation === undefined
      ? undefined
      : applyRouteChanges(lastTranslation, config.routes, context, (settings) => {
          if (!served(settings)) return undefined;
          const problems: Problem[] = [];
          const translated = translateRoute(settings, config, options, problems);
          return problems.length === 0 ? translated : undefined;
        });
  if (changed !== undefined) {
    return {
      ir: assemble(config, options, changed.virtualHosts, changed.clusters),
      problems: [],
      state: changed,
      fromChanges: true,
      reusedRoutes: changed.translated.filter((route, index) => route === lastTranslation?.translated[index])
        .length,
      clusterBuildOrder: undefined,
      hostBuildOrder: undefined,
    };
  }
  // Unchanged routes (the parse cache hands them the same RouteSettings objects) keep their
  // translation from the last good one; a first translation has nothing to look up.
  const reuse =
    lastTranslation !== undefined && lastTranslation.context === context
      ? new EarlierTranslations(lastTranslation, config.routes.length)
      : undefined;
  const problems: Problem[] = [];
  // The route (index into `config.routes`) each problem is about, to report them in config order.
  const problemRoutes: number[] = [];
  // Everything later steps need from a route is gathered while its translation is at hand (in
  // cache): at 10,000 routes, each further pass over the route objects costs a cache miss each.
  const translatedRoutes: TranslatedRoute[] = [];
  const clustersInRouteOrder: IRCluster[] = [];
  const leads = new Int32Array(config.routes.length);
  /** Each translated route's index in `config.routes`. */
  const routeIndexes = new Int32Array(config.routes.length);
  for (let index = 0; index < config.routes.length; index++) {
    const settings = config.routes[index] as RouteSettings;
    if (served(settings)) {
      const translated = reuse?.find(settings, index) ?? translateRoute(settings, config, options, problems);
      leads[translatedRoutes.length] = translated.idLead;
      routeIndexes[translatedRoutes.length] = index;
      translatedRoutes.push(translated);
      clustersInRouteOrder.push(translated.cluster);
    } else {
      const what =
        settings.kind === 'tcp'
          ? 'TCP routes'
          : settings.redirect !== undefined
            ? 'redirect routes'
            : 'response routes';
      problems.push({
        path: settings.source_path,
        message: `${what} are valid configuration but not served by this version yet`,
      });
    }
    while (problemRoutes.length < problems.length) problemRoutes.push(index);
  }
  const idOrder = orderByRouteId(
    leads.subarray(0, translatedRoutes.length),
    (at) => (translatedRoutes[at] as TranslatedRoute).id,
  );
  reportDuplicateIds(translatedRoutes, leads, routeIndexes, idOrder, problems, problemRoutes);
  if (problems.length > 0)
    return {
      ir: undefined,
      problems: inRouteOrder(problems, problemRoutes),
      state: undefined,
      reusedRoutes: 0,
      clusterBuildOrder: undefined,
      hostBuildOrder: undefined,
    };
  // Sorted by name, the catch-all last; made in config order. A grouping that reused routes starts
  // from the previous reload's order; otherwise the names are all new strings.
  const { virtualHosts, hostBuildOrder } = groupHosts(
    translatedRoutes,
    reuse === undefined || reuse.foundCount === 0,
  );
  // Cluster names are `route-<id>`: in id order, they are sorted by name. The clusters were made in
  // route order, so route i's cluster sits at place `clusterBuildOrder[i]` of the sorted list.
  const sortedClusters = new Array<IRCluster>(idOrder.length);
  const clusterBuildOrder = new Int32Array(idOrder.length);
  for (let k = 0; k < idOrder.length; k++) {
    const at = idOrder[k] as number;
    sortedClusters[k] = clustersInRouteOrder[at] as IRCluster;
    clusterBuildOrder[at] = k;
  }
  return {
    ir: assemble(config, options, virtualHosts, sortedClusters),
    problems: [],
    reusedRoutes: reuse?.foundCount ?? 0,
    clusterBuildOrder,
    hostBuildOrder,
    state: {
      context,
      settings: config.routes,
      translated: translatedRoutes,
      virtualHosts,
      clusters: sortedClusters,
    },
  };
}

/**
 * Reports each route whose id an earlier route already has (same from, matcher and to), naming the
 * first route with that id. `order` lists the routes in id order, so equal ids are adjacent,
 * earliest first; ids are compared only where their leading words (`leads`) are equal.
 * `routeIndexes[i]` is route i's index in the config's list (unserved routes included).
 */
function reportDuplicateIds(
  routes: readonly TranslatedRoute[],
  leads: Int32Array,
  routeIndexes: Int32Array,
  order: Int32Array,
  problems: Problem[],
  problemRoutes: number[],
): void {
  const idAt = (k: number): string => (routes[order[k] as number] as TranslatedRoute).id;
  for (let k = 1; k < order.length; k++) {
    if (leads[order[k] as number] !== leads[order[k - 1] as number] || idAt(k) !== idAt(k - 1)) continue;
    let first = k - 1;
    while (first > 0 && idAt(first - 1) === idAt(k)) first--;
    const route = routes[order[k] as number] as TranslatedRoute;
    const earlier = routes[order[first] as number] as TranslatedRoute;
    problems.push({
      path: route.route.sourcePath,
      message: `duplicates ${earlier.route.sourcePath} (same from, matcher and to); remove one or change its matcher`,
    });
    problemRoutes.push(routeIndexes[order[k] as number] as number);
  }
}

/** `problems` ordered by the route each is about (`routes[i]`), stable within a route. */
function inRouteOrder(problems: readonly Problem[], routes: readonly number[]): Problem[] {
  return problems
    .map((problem, at) => ({ problem, at }))
    .sort((a, b) => (routes[a.at] as number) - (routes[b.at] as number) || a.at - b.at)
    .map(({ problem }) => problem);
}

/**
 * The last good translation's routes, found by their settings objects. A route at the same place
 * as before is found by one comparison; a hash table of every earlier route is built only once a
 * route is missing from its place while others were found at theirs, or the route count changed
 * (routes inserted or removed). A freshly parsed config, whose objects no earlier translation can
 * hold, then costs one comparison per route instead of a table of 10,000 objects. A config that
 * only reordered its routes is translated afresh: same result, more time.
 */
class EarlierTranslations {
  private table: Map<RouteSettings, TranslatedRoute> | undefined;
  /** How many earlier translations were found (reused), at their place or in the table. */
  foundCount = 0;
  private readonly resized: boolean;

  constructor(
    private readonly last: TranslatedRoutes,
    count: number,
  ) {
    this.resized = count !== last.settings.length;
  }

  /** The earlier translation of `settings` (now at `index`), if there is one. */
  find(settings: RouteSettings, index: number): TranslatedRoute | undefined {
    if (this.last.settings[index] === settings) {
      this.foundCount++;
      return this.last.translated[index];
    }
    if (this.table === undefined) {
      // Until the table exists, every route found was found at its place.
      if (!this.resized && this.foundCount === 0) return undefined;
      this.table = new Map();
      for (let i = 0; i < this.last.settings.length; i++)
        this.table.set(this.last.settings[i] as RouteSettings, this.last.translated[i] as TranslatedRoute);
    }
    const earlier = this.table.get(settings);
    if (earlier !== undefined) this.foundCount++;
    return earlier;
  }
}

/** Route kinds this version serves (the others are reported as problems). */
function served(settings: RouteSettings): boolean {
  return settings.kind !== 'tcp' && settings.redirect === undefined && settings.response === undefined;
}

/** The IR around translated virtual hosts and clusters. */
function assemble(
  config: Config,
  options: TranslateOptions,
  virtualHosts: readonly IRVirtualHost[],
  clusters: readonly IRCluster[],
): IR {
  return {
    listener: buildListener(config),
    virtualHosts,
    clusters,
    responseHeaders: globalResponseHeaders(config.set_response_headers, !config.insecure_server),
    authorize: {
      claimHeaders: config.jwt_claims_headers,
      authenticateUrl: config.authenticate_service_url?.href.replace(/\/$/, ''),
      cookieName: config.cookie_name,
    },
    internal: options.internal,
  };
}

/** The settings outside a route that its translation depends on; a change retranslates every route. */
function routeContext(config: Config, options: TranslateOptions): string {
  return `${config.default_upstream_timeout_ms}|${String(config.pass_identity_headers)}|${options.systemCaFile}`;
}

/** Translates one route; problems with its upstreams are added to `problems`. */
function translateRoute(
  settings: RouteSettings,
  config: Config,
  options: TranslateOptions,
  problems: Problem[],
): TranslatedRoute {
  const id = routeId(settings);
  const placement = placeHost(settings.from_host);
  const clusterName = concatFlat('route-', id);
  const cluster = buildCluster(settings, clusterName, options.systemCaFile, problems);
  return {
    id,
    idLead: routeIdLead(id),
    vhost: placement.vhost,
    domains: placement.domains,
    route: buildRoute(settings, id, clusterName, placement.authorityRegex, config),
    cluster,
  };
}

/** The host rewrites without parameters: one object each for every route (the IR is immutable). */
const AUTO_HOST: IRHostRewrite = { kind: 'auto' };
const PRESERVE_HOST: IRHostRewrite = { kind: 'preserve' };
/** The match of a route without a matcher (or `prefix: /`): one object for all of them, as above. */
const ROOT_PREFIX: IRPathMatch = { kind: 'prefix', value: '/' };

function buildRoute(
  settings: RouteSettings,
  id: string,
  clusterName: string,
  authorityRegex: string | undefined,
  config: Config,
): IRRoute {
  const match: IRPathMatch =
    settings.path !== undefined
      ? { kind: 'path', value: settings.path }
      : settings.regex !== undefined
        ? { kind: 'regex', value: settings.regex }
        : settings.prefix === undefined || settings.prefix === '/'
          ? ROOT_PREFIX
          : { kind: 'prefix', value: settings.prefix };
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
        : settings.preserve_host_header
          ? PRESERVE_HOST
          : AUTO_HOST,
    allowWebsockets: websockets,
    requestHeadersToSet: settings.set_request_headers,
    requestHeadersToRemove: settings.remove_request_headers,
    responseHeadersToSet: settings.set_response_headers,
    public: settings.allow_public_unauthenticated_access,
    policy: assembleRoutePolicy(settings),
    passIdentityHeaders: settings.pass_identity_headers ?? config.pass_identity_headers,
  };
}

function buildListener(config: Config): IRListener {
  const separator = config.address.lastIndexOf(':');
  const host = config.address.slice(0, separator).replace(/^\[|\]$/g, '');
  return {
    name: config.insecure_server ? 'http-ingress' : 'https-ingress',
    host: host === '' ? '0.0.0.0' : host,
    port: Number(config.address.slice(separator + 1)),
    tls: config.insecure_server ? undefined : { certificates: config.certificates },
    useProxyProtocol: config.use_proxy_protocol,
    xffNumTrustedHops: config.xff_num_trusted_hops,
    requestTimeoutMs: config.timeout_read_ms,
    idleTimeoutMs: config.timeout_idle_ms,
  };
}

function globalResponseHeaders(
  configured: Readonly<Record<string, string>> | undefined,
  tls: boolean,
): Record<string, string> {
  if (configured === undefined)
    return tls ? { ...DEFAULT_RESPONSE_HEADERS, ...HSTS } : { ...DEFAULT_RESPONSE_HEADERS };
  if (Object.keys(configured).some((key) => key.toLowerCase() === 'disable')) return {};
  return { ...configured };
}
