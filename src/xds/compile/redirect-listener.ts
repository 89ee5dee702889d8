import { accessLogs } from './access-log.js';
import { proxyProtocolFilter } from './listener.js';
import type { IRHttpRedirect } from '../../ir/types.js';
import { durationMs, typed, wrapped } from '../../proto/codec.js';
import type { Message } from '../../proto/messages.js';
import {
  CONNECTION_BUFFER_LIMIT_BYTES,
  HTTP_FILTER_ROUTER,
  NETWORK_FILTER_HCM,
} from '../../contract/names.js';

/** Bounds for a listener that only ever answers a redirect (as the HTTPS listener's). */
const MAX_REQUEST_HEADERS_KB = 64;
const REQUEST_HEADERS_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 60_000;
const HTTPS_DEFAULT_PORT = 443;

type HttpConnectionManager =
  Message<'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager'>;

/**
 * IR redirect listener -> the plain-HTTP Envoy `listener.v3.Listener` of `http_redirect_addr`: one
 * connection manager with an inline route table (no RDS, so it never waits on a route push), one
 * catch-all virtual host whose one route answers every request with 301 to
 * `https://<host without port>[:<httpsPort unless 443>]<path>?<query>` (Envoy's `https_redirect`,
 * which keeps path and query). The connection manager strips the port the client sent
 * (`strip_any_host_port`: without it Envoy keeps a non-default one, this listener's); `port_redirect`
 * adds the HTTPS port unless it is 443 (with it, Envoy writes `:443`). No ext_authz and no
 * cluster: nothing reaches an upstream or Portcullis over plain HTTP. `accessLog`: log each request.
 */
export function compileRedirectListener(
  redirect: IRHttpRedirect,
  accessLog: boolean,
): Message<'envoy.config.listener.v3.Listener'> {
  const toHttps: Message<'envoy.config.route.v3.RedirectAction'> = {
    https_redirect: true,
    response_code: 'MOVED_PERMANENTLY',
  };
  if (redirect.httpsPort !== HTTPS_DEFAULT_PORT) toHttps.port_redirect = redirect.httpsPort;
  const manager: HttpConnectionManager = {
    stat_prefix: 'http_redirect',
    codec_type: 'AUTO',
    // The port the client dialled (this listener's) is not the HTTPS one: drop it before redirecting.
    strip_any_host_port: true,
    route_config: {
      name: redirect.name,
      virtual_hosts: [
        { name: redirect.name, domains: ['*'], routes: [{ match: { prefix: '/' }, redirect: toHttps }] },
      ],
    },
    http_filters: [
      { name: HTTP_FILTER_ROUTER, typed_config: typed('envoy.extensions.filters.http.router.v3.Router', {}) },
    ],
    max_request_headers_kb: wrapped(MAX_REQUEST_HEADERS_KB),
    request_headers_timeout: durationMs(REQUEST_HEADERS_TIMEOUT_MS),
    common_http_protocol_options: { idle_timeout: durationMs(IDLE_TIMEOUT_MS) },
  };
  // Logged like every other request when the HTTPS listener logs (`log_level` info or lower);
  // assigned rather than spread in, so the field name is type-checked.
  if (accessLog) manager.access_log = accessLogs();
  const listener: Message<'envoy.config.listener.v3.Listener'> = {
    name: redirect.name,
    address: { socket_address: { address: redirect.host, port_value: redirect.port } },
    per_connection_buffer_limit_bytes: wrapped(CONNECTION_BUFFER_LIMIT_BYTES),
    filter_chains: [
      {
        filters: [
          {
            name: NETWORK_FILTER_HCM,
            typed_config: typed(
              'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              manager,
            ),
          },
        ],
      },
    ],
  };
  // Behind the same load balancer as the HTTPS listener: its connections carry a PROXY header too.
  if (redirect.useProxyProtocol) listener.listener_filters = [proxyProtocolFilter()];
  return listener;
}
