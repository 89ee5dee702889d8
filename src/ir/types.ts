/**
 * The intermediate representation: Portcullis's own model of what Envoy must do, after defaults
 * are applied and cross-references checked, before any Envoy type appears. Compile turns it into
 * xDS resources; golden files at this seam show every decision translate made. Durations are in
 * milliseconds; names are derived from content, never from counters.
 */
import type { PolicyRule } from './policy.js';
import type { IRAnswer } from './answer.js';
import type { IRTracing } from './tracing.js';
import type { HealthCheckSettings, LoadBalancingPolicy, OutlierDetectionSettings } from './upstream.js';
import type { IRObservability, IRProcess, IRSignIn } from './services.js';

export interface IR {
  readonly listener: IRListener;
  /** Virtual hosts sorted by name; the wildcard catch-all (if any) is last. */
  readonly virtualHosts: readonly IRVirtualHost[];
  /** Clusters sorted by name. */
  readonly clusters: readonly IRCluster[];
  /** Response headers set on every route unless a route overrides them. */
  readonly responseHeaders: Readonly<Record<string, string>>;
  readonly authorize: IRAuthorize;
  /** Where Envoy reaches Portcullis itself; undefined compiles routes with no authorization at all. */
  readonly internal: IRInternal | undefined;
  /** `http_redirect_addr`: the plain-HTTP listener that redirects every request to HTTPS. */
  readonly httpRedirect?: IRHttpRedirect;
  /** How this process runs its services (services.ts); compile does not read it. */
  readonly process: IRProcess;
  /** Logs, metrics and Portcullis's own traces; compile does not read it. */
  readonly observability: IRObservability;
  /** Sign-in settings; absent without `authenticate_service_url`. Compile does not read it. */
  readonly signIn: IRSignIn | undefined;
}

/** A plain-HTTP listener whose every answer is a 301 to `https://<host>[:httpsPort]<path>?<query>`. */
export interface IRHttpRedirect {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** The port of the HTTPS listener (`address`), which the redirects name unless it is 443. */
  readonly httpsPort: number;
  /** `use_proxy_protocol`: connections start with a PROXY header (v1 or v2), as on the HTTPS listener. */
  readonly useProxyProtocol: boolean;
}

/** Portcullis's own endpoints as Envoy sees them. */
export interface IRInternal {
  /**
   * The ext_authz gRPC service (the gRPC listener in all-in-one mode). `tls` when `tls_derive` is
   * set: Envoy dials it over TLS, trusting only the derived CA and checking the certificate names
   * `serverName` (contract/internal-tls.ts).
   */
  readonly authorize: {
    readonly host: string;
    readonly port: number;
    readonly tls?: { readonly caPem: string; readonly serverName: string };
  };
  /** Bound on one ext_authz call; past it Envoy answers 503 (fail closed). */
  readonly authorizeTimeoutMs: number;
  /** The public JWKS served on every route host at /.well-known/portcullis/jwks.json. */
  readonly jwksJson: string;
  /**
   * The decision key's public JWKS (keys/signing-key.ts `deriveDecisionKey`): what Envoy's
   * jwt_authn verifies decision tokens with when the fast path is on (docs/fast-path.md). Public,
   * and derived from the shared secret, so every instance's Envoys trust every instance's tokens.
   */
  readonly decisionJwksJson: string;
  /**
   * Portcullis's HTTP server (sign-in, callback, sign-out, user page: contract/endpoints.ts), which
   * Envoy reaches for `/.portcullis/*` on every route host and for every path of the authenticate
   * host. Loopback in all-in-one mode. `tls` as for `authorize` (the server then serves HTTPS).
   */
  readonly http: {
    readonly host: string;
    readonly port: number;
    readonly tls?: { readonly caPem: string; readonly serverName: string };
  };
}

/** What the authorize service needs beyond each route's policy; no secrets (those are in the key ring). */
export interface IRAuthorize {
  /** Request header -> session claim, for `jwt_claims_headers`. */
  readonly claimHeaders: Readonly<Record<string, string>>;
  /** Base URL of the authenticate service users are sent to for sign-in; undefined: hosted/not configured. */
  readonly authenticateUrl: string | undefined;
  /** Name of the session cookie (`cookie_name`). */
  readonly cookieName: string;
  /** `jwt_issuer_format`: the assertion's `iss` is the host (with a non-default port) or `https://host/`. */
  readonly issuerFormat: 'host_only' | 'uri';
  /** `jwt_groups_filter`: the groups an assertion may name; absent: every group. */
  readonly groupsFilter: readonly string[] | undefined;
  /**
   * `decision_token_lifetime`: how long Envoy may replay an allow by itself (the fast path,
   * docs/fast-path.md); 0 means the fast path is off and compile emits no fast-path filter.
   */
  readonly decisionTokenLifetimeMs: number;
}

export interface IRListener {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly tls: { readonly certificates: readonly { certPem: string; keyPem: string }[] } | undefined;
  readonly useProxyProtocol: boolean;
  readonly xffNumTrustedHops: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Envoy's OpenTelemetry tracing (`otel_exporter_otlp_endpoint`); absent: nothing traced. */
  readonly tracing?: IRTracing;
  /** One access-log line per request on Envoy's stdout (`log_level` info or lower); absent: none. */
  readonly accessLog?: true;
  /**
   * Some route rewrites its upstream's response headers (`IRRoute.responseHeaderRewrites`), so the
   * listener's chain carries the rewrite filter; absent: no route does, and the chain has none.
   */
  readonly rewritesResponseHeaders?: true;
}

/** One prefix rewrite of a response header: a value of `header` starting with `prefix` gets `value` instead. */
export interface IRResponseHeaderRewrite {
  /** Lower case. */
  readonly header: string;
  readonly prefix: string;
  readonly value: string;
}

export interface IRVirtualHost {
  readonly name: string;
  /** Envoy domains: exact hosts, or `*.suffix` / `prefix.*` wildcards Envoy matches natively. */
  readonly domains: readonly string[];
  readonly routes: readonly IRRoute[];
}

export type IRPathMatch =
  | { readonly kind: 'prefix'; readonly value: string }
  | { readonly kind: 'path'; readonly value: string }
  | { readonly kind: 'regex'; readonly value: string };

/**
 * One piece of a templated request-header value: literal text, the session's access or ID token
 * as the identity provider issued it, or one of its claims (config/header-templates.ts).
 */
export type IRHeaderPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'access_token' }
  | { readonly kind: 'id_token' }
  | { readonly kind: 'claim'; readonly claim: string };

export type IRHostRewrite =
  | { readonly kind: 'auto' }
  | { readonly kind: 'preserve' }
  | { readonly kind: 'literal'; readonly host: string };

export interface IRRoute {
  /**
   * 16 hex characters derived from what Envoy matches the route on (from host and path matcher:
   * translate/route-identity.ts), never its upstreams: stable across restarts, reorderings and
   * every change that leaves the match alone. It also names the route's cluster (`route-<id>`).
   */
  readonly id: string;
  readonly name: string;
  readonly sourcePath: string;
  readonly match: IRPathMatch;
  /** Anchored RE2 for `:authority` when the from host has a wildcard Envoy cannot express in domains. */
  readonly authorityRegex: string | undefined;
  /**
   * The port `from` names, when it names one (for the bastion TCP form, the port of the host
   * clients dial; never a TCP route's CONNECT port): where users reach the route when a load
   * balancer forwards that port to the listener. Sign-in hands sessions to the listener's port
   * and this one only (authenticate/route-locator.ts).
   */
  readonly fromPort?: number;
  readonly clusterName: string;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number | undefined;
  readonly prefixRewrite: string | undefined;
  readonly regexRewrite: { readonly pattern: string; readonly substitution: string } | undefined;
  readonly hostRewrite: IRHostRewrite;
  readonly allowWebsockets: boolean;
  readonly requestHeadersToSet: Readonly<Record<string, string>>;
  /**
   * The `set_request_headers` whose values name the session's tokens or claims, by lower-case
   * header name: authorize fills them in on each allow (never Envoy's static headers, never the
   * fast path's decision cookie). Absent: none.
   */
  readonly requestHeaderTemplates?: Readonly<Record<string, readonly IRHeaderPart[]>>;
  readonly requestHeadersToRemove: readonly string[];
  readonly responseHeadersToSet: Readonly<Record<string, string>>;
  /**
   * Prefix rewrites of the upstream's response headers, in order (for each value the first rule of
   * its header that matches applies); absent when none. Never on a route that answers by itself.
   */
  readonly responseHeaderRewrites?: readonly IRResponseHeaderRewrite[];
  /** Public routes skip ext_authz in Envoy entirely (their identity headers are still stripped). */
  readonly public: boolean;
  /** The access shortcuts and `policy` rules, assembled into one rule list (see route-policy.ts). */
  readonly policy: readonly PolicyRule[];
  /** Send the signed identity assertion and claim headers upstream (route value, else global). */
  readonly passIdentityHeaders: boolean;
  /**
   * Client-sent identity headers (shared/identity-headers.ts) Envoy lets through on this route,
   * lower case, sorted; absent means none (every one is stripped).
   */
  readonly passRequestIdentityHeaders?: readonly string[];
  /**
   * The identity-provider client this route signs users in with (`idpId` of its settings: the
   * route's own `idp_client_id` or the global one). Only sessions made by that client count here.
   */
  readonly idpId: string;
  /**
   * Set when the route answers by itself (config `redirect` or `response`, answer.ts): Envoy
   * answers once the policy admits the request, and `clusterName` names no cluster.
   */
  readonly answer?: IRAnswer;
  /**
   * Set on a TCP route: the exact `host:port` a CONNECT must name. Envoy sends only such CONNECTs
   * here and pipes their bytes to the cluster (compile/tcp-route.ts); `match` is unused.
   */
  readonly tcpAuthority?: string;
  /**
   * Set when Envoy may replay this route's allows (the fast path is on and the allow depends on
   * the session alone, on an exact host: translate/decision-name.ts): `<route id>.<checksum>`, the
   * name decision tokens list the route under. Editing what the allow depends on renames it.
   */
  readonly decisionName?: string;
}

export interface IREndpoint {
  readonly host: string;
  readonly port: number;
  readonly weight: number | undefined;
}

export interface IRUpstreamTls {
  readonly serverName: string;
  readonly skipVerify: boolean;
  /** PEM bundle to trust; undefined means the system trust store at `systemCaFile`. */
  readonly customCaPem: string | undefined;
  readonly systemCaFile: string;
  readonly clientCertificate: { readonly certPem: string; readonly keyPem: string } | undefined;
}

export interface IRCluster {
  readonly name: string;
  /** EDS when every endpoint is an IP literal; STRICT_DNS (inline endpoints) when any is a hostname. */
  readonly discovery: 'EDS' | 'STRICT_DNS';
  readonly lbPolicy: LoadBalancingPolicy;
  readonly endpoints: readonly IREndpoint[];
  readonly connectTimeoutMs: number;
  readonly tls: IRUpstreamTls | undefined;
  /**
   * `http2` for h2c destinations; HTTP/1.1 for plain http and websocket routes; ALPN (h2 or
   * HTTP/1.1) for TLS; `tcp` for a TCP route's cluster (the tunnelled bytes, no HTTP).
   */
  readonly upstreamProtocol: 'http1' | 'http2' | 'alpn' | 'tcp';
  readonly healthChecks: readonly HealthCheckSettings[];
  readonly outlierDetection: OutlierDetectionSettings | undefined;
  readonly healthyPanicThreshold: number | undefined;
}

/**
 * The name of the virtual host that collects wildcard shapes Envoy cannot match natively; IR
 * virtual hosts are sorted by name with this one last.
 */
export const CATCH_ALL_VHOST = 'catch-all';
