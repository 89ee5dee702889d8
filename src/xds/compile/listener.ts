import type { IRAuthorize, IRInternal, IRListener } from '../../ir/types.js';
import { accessLogs } from './access-log.js';
import { extAuthzFilter } from './ext-authz.js';
import { hostCaseFilter } from './host-case.js';
import { hcmTracing } from './tracing.js';
import { credentialStripFilter, identityStripFilter } from './identity-strip.js';
import { rewriteResponseHeadersFilter } from './response-header-rewrites.js';
import { fastPathInternal, fastPathRbacFilter, jwtAuthnFilter, tokenIdentityHeaders } from './fast-path.js';
import type { RouteScoping } from './route-scoping.js';
import { durationMs, typed, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import {
  CONNECTION_BUFFER_LIMIT_BYTES,
  INGRESS_ROUTE_CONFIG,
  HTTP_FILTER_ROUTER,
  LISTENER_FILTER_PROXY_PROTOCOL,
  LISTENER_FILTER_TLS_INSPECTOR,
  NETWORK_FILTER_HCM,
  TRANSPORT_SOCKET_TLS,
} from '../../contract/names.js';

type HttpConnectionManager =
  Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'>;

/**
 * What the filters need of the authorize settings: the session cookie's name and the configured
 * claim headers (the strips, jwt_authn), and the decision token lifetime (whether the fast path is on).
 */
export type ChainInputs = Pick<IRAuthorize, 'cookieName' | 'claimHeaders' | 'decisionTokenLifetimeMs'>;

/** Envoy-side request limits: bounded headers and HTTP/2 windows (security-threats.md 0.1). */
const MAX_REQUEST_HEADERS_KB = 64;
const MAX_HEADERS_COUNT = 100;
const REQUEST_HEADERS_TIMEOUT_MS = 10_000;
const STREAM_IDLE_TIMEOUT_MS = 300_000;

/**
 * IR listener -> the user-facing Envoy `listener.v3.Listener`: PROXY protocol first when enabled
 * (so X-Forwarded-For is the real client behind another proxy), TLS when not `insecure_server`,
 * and one HTTP connection manager that routes via RDS or per-host scoped RDS (`route-scoping.ts`).
 */
export function compileListener(
  listener: IRListener,
  internal: IRInternal | undefined,
  authorize: ChainInputs,
  scoping: RouteScoping = 'single',
): Message<'envoy.config.listener.v3.Listener'> {
  const listenerFilters: Message<'envoy.config.listener.v3.ListenerFilter'>[] = [];
  if (listener.useProxyProtocol) listenerFilters.push(proxyProtocolFilter());
  const chain: Message<'envoy.config.listener.v3.FilterChain'> = {
    filters: [
      {
        name: NETWORK_FILTER_HCM,
        typed_config: typed(
          'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
          httpConnectionManager(listener, internal, authorize, scoping),
        ),
      },
    ],
  };
  if (listener.tls !== undefined) {
    listenerFilters.push({
      name: LISTENER_FILTER_TLS_INSPECTOR,
      typed_config: typed('envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector', {}),
    });
    chain.transport_socket = downstreamTls(listener.tls.certificates);
  }
  const out: Message<'envoy.config.listener.v3.Listener'> = {
    name: listener.name,
    address: { socket_address: { address: listener.host, port_value: listener.port } },
    per_connection_buffer_limit_bytes: wrapped(CONNECTION_BUFFER_LIMIT_BYTES),
    filter_chains: [chain],
  };
  if (listenerFilters.length > 0) out.listener_filters = listenerFilters;
  return out;
}

const ADS_SOURCE: Message<'envoy.config.core.v3.ConfigSource'> = { ads: {}, resource_api_version: 'V3' };

/**
 * Scoped routes keyed by the host part of `:authority` (the element before the first `:`), so
 * `app.example.com:8443` finds the `app.example.com` scope now that the connection manager keeps
 * the port; the trailing dot is stripped before the key is read (`strip_trailing_host_dot`), so
 * `app.example.com.` finds it too. Scopes are only used for exact host names without a colon
 * (route-scoping.ts). Scopes and their route configurations both come over ADS.
 */
function hostScopedRoutes(): Message<'envoy.extensions.filters.network.http_connection_manager.v3.ScopedRoutes'> {
  return {
    name: INGRESS_ROUTE_CONFIG,
    scope_key_builder: {
      fragments: [{ header_value_extractor: { name: ':authority', element_separator: ':', index: 0 } }],
    },
    rds_config_source: ADS_SOURCE,
    scoped_rds: { scoped_rds_config_source: ADS_SOURCE },
  };
}

/**
 * The HTTP connection manager with every setting of the Envoy contract in security-threats.md
 * 0.1 that applies: normalized paths, merged slashes, escaped slashes rejected, underscores in
 * header names rejected, HTTP/1.0 refused, explicit XFF trust and internal addresses (loopback
 * only), the host's trailing dot stripped, bounded headers, HTTP/2 limits and timeouts. The port
 * the client sent is kept: ext_authz sees it, so sign-in returns to it and the
 * assertion's `iss`/`aud` carry it; route tables match hosts ignoring it
 * (`ignore_port_in_host_matching`) and scopes key on the host part. The chain (names in
 * contract/names.ts):
 *
 * 1. under per-host routes, the host-case filter: it lower-cases the host of a request that found
 *    no scope, and Envoy routes it again (host-case.ts);
 * 2. the identity strip: every client-sent `x-portcullis-*` and claim header goes, and every
 *    header of the shared identity list (`impersonate-*`, `x-forwarded-user`, ...) the route does
 *    not pass by name (identity-strip.ts);
 * 3. with the fast path on (`decision_token_lifetime` above 0, docs/fast-path.md), jwt_authn
 *    verifies a decision token and sets the sid, assertion and claim headers from it, and the shadow
 *    RBAC (its config over ECDS: the revocations) writes whether Envoy may replay the allow: the
 *    route is named in the token and the session not revoked (fast-path.ts);
 * 4. ext_authz, when authorization is on: it reads the credentials and, on an allowed request,
 *    sets the assertion and claim headers and the Cookie header without the session cookie; with
 *    the fast path on it is skipped when the shadow RBAC allowed;
 * 5. when some route has `rewrite_response_headers`, the rewrite filter: its Lua runs only on routes
 *    with rules, and only on the responses of requests that got this far, so Portcullis's own
 *    replies (sign-in redirects, deny pages) are never rewritten (response-header-rewrites.ts);
 * 6. the credential strip: the session cookie and `Authorization: Portcullis` go, and with the fast
 *    path on the decision cookie and the sid header too, and on a fast-path allow the token's
 *    identity headers where the route sends none;
 * 7. the router.
 *
 * The strips have no per-route config anywhere, so they run on every request that can reach an
 * upstream, whatever route, scope or host spelling it took; public routes'
 * `request_headers_to_remove` is a second line for the identity headers.
 */
export function httpConnectionManager(
  listener: IRListener,
  internal: IRInternal | undefined,
  authorize: ChainInputs,
  scoping: RouteScoping = 'single',
): HttpConnectionManager {
  const fastPath = fastPathInternal({ internal, authorize });
  const manager: HttpConnectionManager = {
    stat_prefix: 'ingress',
    codec_type: 'AUTO',
    http_filters: [
      ...(scoping === 'per-host' ? [hostCaseFilter()] : []),
      identityStripFilter(Object.keys(authorize.claimHeaders)),
      ...(fastPath === undefined ? [] : [jwtAuthnFilter(fastPath, authorize), fastPathRbacFilter()]),
      ...(internal === undefined ? [] : [extAuthzFilter(internal, fastPath !== undefined)]),
      ...(listener.rewritesResponseHeaders === true ? [rewriteResponseHeadersFilter()] : []),
      credentialStripFilter(
        authorize.cookieName,
        fastPath === undefined
          ? undefined
          : { identityHeaders: tokenIdentityHeaders(authorize.claimHeaders) },
      ),
      {
        name: HTTP_FILTER_ROUTER,
        typed_config: typed('envoy.extensions.filters.http.router.v3.Router', {}),
      },
    ],
    use_remote_address: wrapped(true),
    xff_num_trusted_hops: listener.xffNumTrustedHops,
    internal_address_config: {
      cidr_ranges: [
        { address_prefix: '127.0.0.1', prefix_len: wrapped(32) },
        { address_prefix: '::1', prefix_len: wrapped(128) },
      ],
    },
    normalize_path: wrapped(true),
    merge_slashes: true,
    path_with_escaped_slashes_action: 'REJECT_REQUEST',
    strip_trailing_host_dot: true,
    max_request_headers_kb: wrapped(MAX_REQUEST_HEADERS_KB),
    common_http_protocol_options: {
      idle_timeout: durationMs(listener.idleTimeoutMs),
      max_headers_count: wrapped(MAX_HEADERS_COUNT),
      headers_with_underscores_action: 'REJECT_REQUEST',
    },
    http_protocol_options: { accept_http_10: false },
    http2_protocol_options: {
      max_concurrent_streams: wrapped(100),
      initial_stream_window_size: wrapped(65_536),
      initial_connection_window_size: wrapped(1_048_576),
    },
    request_headers_timeout: durationMs(REQUEST_HEADERS_TIMEOUT_MS),
    stream_idle_timeout: durationMs(STREAM_IDLE_TIMEOUT_MS),
    request_timeout: durationMs(listener.requestTimeoutMs),
    always_set_request_id_in_response: true,
    local_reply_config: localReplyConfig(),
  };
  // Optional parts are assigned rather than spread in, so their field names are type-checked too.
  if (listener.accessLog === true) manager.access_log = accessLogs(fastPath !== undefined);
  if (scoping === 'single') {
    manager.rds = { route_config_name: INGRESS_ROUTE_CONFIG, config_source: ADS_SOURCE };
  } else {
    manager.scoped_routes = hostScopedRoutes();
  }
  if (listener.tracing !== undefined) manager.tracing = hcmTracing(listener.tracing);
  return manager;
}

/**
 * The response flags of the replies Envoy makes for its own reasons: no route, an upstream that
 * fails, times out or is overloaded, a protocol error. Not `UAEX`: ext_authz's answers are
 * Portcullis's own pages, which carry the request id already; a route's `response` sets no flag.
 */
const ENVOY_FAILURE_FLAGS = [
  'LH',
  'UH',
  'UT',
  'LR',
  'UR',
  'UF',
  'UC',
  'UO',
  'NR',
  'DI',
  'FI',
  'RLSE',
  'URX',
  'SI',
  'IH',
  'DPE',
  'UMSDR',
  'RFCF',
  'NFCF',
  'DT',
  'UPE',
  'NC',
  'OM',
  'DF',
  'DO',
];

/** A plain-text local reply body: `first` line, then the request id (RFC 9110 gives no body). */
function textWithRequestId(first: string): Message<'envoy.config.core.v3.SubstitutionFormatString'> {
  return {
    text_format_source: { inline_string: `${first}\nrequest id: %REQ(X-REQUEST-ID)%\n` },
    content_type: 'text/plain; charset=utf-8',
  };
}

/**
 * Envoy's own failure replies (`ENVOY_FAILURE_FLAGS`: 404 for no route, 503 for an upstream that
 * cannot be reached, ...) say which request failed in their body, as Portcullis's pages do, so a
 * user can quote it and an operator find it in the logs (x-request-id is in every response's
 * headers already: `always_set_request_id_in_response`). ext_authz's answers and a route's own
 * `response` are local replies too and are left alone. A request Envoy refuses before it assigns
 * a request id (an escaped slash, a malformed header) has none to give.
 */
function localReplyConfig(): Message<'envoy.extensions.filters.network.http_connection_manager.v3.LocalReplyConfig'> {
  const failures = { response_flag_filter: { flags: ENVOY_FAILURE_FLAGS } };
  return {
    mappers: [
      {
        filter: { response_flag_filter: { flags: ['NR'] } },
        body_format_override: textWithRequestId('No route matches this host and path.'),
      },
      { filter: failures, body_format_override: textWithRequestId('%LOCAL_REPLY_BODY%') },
    ],
  };
}

function downstreamTls(
  certificates: readonly { certPem: string; keyPem: string }[],
): Message<'envoy.config.core.v3.TransportSocket'> {
  return {
    name: TRANSPORT_SOCKET_TLS,
    typed_config: typed('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext', {
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        tls_certificates: certificates.map(({ certPem, keyPem }) => ({
          certificate_chain: { inline_string: certPem },
          private_key: { inline_string: keyPem },
        })),
        alpn_protocols: ['h2', 'http/1.1'],
      },
    }),
  };
}

/**
 * `use_proxy_protocol`: the listener filter that reads a PROXY header (v1 or v2) first, so the
 * client address a load balancer saw is the one Envoy logs, forwards and authorizes with. Every
 * connection must then start with one (a load balancer in front sends it on each).
 */
export function proxyProtocolFilter(): Message<'envoy.config.listener.v3.ListenerFilter'> {
  return {
    name: LISTENER_FILTER_PROXY_PROTOCOL,
    typed_config: typed('envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol', {}),
  };
}
