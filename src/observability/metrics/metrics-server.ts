import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import parseBasicAuth from 'basic-auth';
import type { Secret } from '../../shared/secret.js';
import { adminRequest } from '../../envoy/admin.js';
import { PortcullisError, errorMessage } from '../../shared/errors.js';
import type { PortcullisMetrics } from './portcullis-metrics.js';
import type { Readiness } from './readiness.js';

/** How long a scrape waits for Envoy's admin `/stats/prometheus` (ms). */
export const ENVOY_STATS_TIMEOUT_MS = 1000;

/** The realm `/metrics` names in its 401 (`WWW-Authenticate`). */
export const METRICS_REALM = 'portcullis metrics';

/** What `/metrics` and `/readyz` answer from once the services run. */
export interface MetricsSources {
  readonly metrics: PortcullisMetrics;
  readonly readiness: Readiness;
  /** The base URL of Envoy's admin to append stats from, or undefined when this process has none. */
  readonly envoyAdminUrl: () => string | undefined;
  /** `metrics_basic_auth` (`user:password`) of the current config; undefined: `/metrics` is open. */
  readonly basicAuth: () => Secret<string> | undefined;
  readonly envoyStatsTimeoutMs?: number;
}

/** Options of `startMetricsServer`. */
export interface MetricsServerOptions extends MetricsSources {
  /** `metrics_address`, as `host` and `port` (0 picks a free port). */
  readonly host: string;
  readonly port: number;
}

/** A listening metrics server. */
export interface MetricsServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

/** A metrics server started before the services it reports on (see startWaitingMetricsServer). */
export interface WaitingMetricsServer extends MetricsServer {
  /** From now on `/metrics` and `/readyz` answer from `sources` (the services started). */
  serve(sources: MetricsSources): void;
}

/** What the server answers from: the services' sources, or the reason it still waits for them. */
type Answering = MetricsSources | { readonly waitingFor: string };

/**
 * Serves, on `metrics_address` (node:http):
 * - `/metrics`: Portcullis's series in Prometheus text format, then Envoy's own (`envoy_*`), read
 *   from its admin `/stats/prometheus` at each scrape within `envoyStatsTimeoutMs`; when Envoy
 *   cannot be read, ours alone with `portcullis_envoy_stats_up 0`. With `metrics_basic_auth`, a
 *   request without those credentials (compared in constant time) gets 401 and
 *   `WWW-Authenticate: Basic realm="portcullis metrics"`;
 * - `/healthz`: 200 while the process runs (liveness);
 * - `/readyz`: 200 when `readiness.check()` says ready, else 503; a JSON body with each check;
 * - anything else 404; a method other than GET or HEAD 405.
 * Resolves once listening; a taken or invalid address rejects with METRICS_BIND_FAILED naming it.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { server } = await startAnswering(options.host, options.port, options);
  return server;
}

/**
 * The same server, started before the services exist (`portcullis kubernetes` waiting for its
 * settings object), so a liveness probe passes while it waits: `/healthz` 200, `/readyz` 503 with
 * `checks.settings` saying `waitingFor`, `/metrics` 503 (nothing to report, and no credentials to
 * check it against yet). `serve` hands it the services' sources once they start; from then on it
 * answers as startMetricsServer's does.
 */
export async function startWaitingMetricsServer(options: {
  readonly host: string;
  readonly port: number;
  readonly waitingFor: string;
}): Promise<WaitingMetricsServer> {
  const { server, answerFrom } = await startAnswering(options.host, options.port, {
    waitingFor: options.waitingFor,
  });
  return { ...server, serve: answerFrom };
}

async function startAnswering(
  host: string,
  listenPort: number,
  first: Answering,
): Promise<{ server: MetricsServer; answerFrom: (sources: MetricsSources) => void }> {
  let answering = first;
  const server = createServer((request, response) => {
    handle(answering, request, response).catch((err: unknown) => {
      if (!response.headersSent) send(response, 500, 'text/plain', `metrics: ${errorMessage(err)}\n`);
      else response.destroy();
    });
  });
  await listen(server, host, listenPort);
  const { port } = server.address() as AddressInfo;
  return {
    server: {
      host,
      port,
      // Closing twice (the services' stop, then the command's) resolves too.
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    },
    answerFrom: (sources) => {
      answering = sources;
    },
  };
}

async function listen(server: Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        new PortcullisError(
          'METRICS_BIND_FAILED',
          `cannot listen on metrics_address ${host.includes(':') ? `[${host}]` : host}:${port}: ${errorMessage(err)}`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
}

async function handle(options: Answering, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://metrics').pathname;
  if (path !== '/metrics' && path !== '/healthz' && path !== '/readyz') {
    send(response, 404, 'text/plain', 'not found: try /metrics, /healthz or /readyz\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    send(response, 405, 'text/plain', 'method not allowed\n');
    return;
  }
  if (path === '/healthz') {
    send(response, 200, 'text/plain', 'ok\n');
    return;
  }
  if ('waitingFor' in options) {
    if (path === '/readyz') {
      const report = { ready: false, checks: { settings: options.waitingFor } };
      send(response, 503, 'application/json', `${JSON.stringify(report)}\n`);
    } else send(response, 503, 'text/plain', `${options.waitingFor}\n`);
    return;
  }
  if (path === '/readyz') {
    const report = await options.readiness.check();
    send(response, report.ready ? 200 : 503, 'application/json', `${JSON.stringify(report)}\n`);
    return;
  }
  const expected = options.basicAuth();
  if (expected !== undefined && !authorized(request, expected.reveal())) {
    response.setHeader('www-authenticate', `Basic realm="${METRICS_REALM}"`);
    send(response, 401, 'text/plain', 'metrics need the credentials of metrics_basic_auth\n');
    return;
  }
  send(response, 200, options.metrics.registry.contentType, await scrape(options));
}

/** Our series, then Envoy's stats when its admin answers in time. */
async function scrape(options: MetricsSources): Promise<string> {
  const envoy = await envoyStats(options);
  options.metrics.envoyStatsUp(envoy !== undefined);
  const ours = await options.metrics.registry.metrics();
  return envoy === undefined ? ours : `${ours}\n${envoy}`;
}

/** Envoy's `/stats/prometheus` text, or undefined when there is no admin or it did not answer 200. */
async function envoyStats(options: MetricsSources): Promise<string | undefined> {
  const url = options.envoyAdminUrl();
  if (url === undefined) return undefined;
  try {
    const answer = await adminRequest(url, '/stats/prometheus', {
      timeoutMs: options.envoyStatsTimeoutMs ?? ENVOY_STATS_TIMEOUT_MS,
    });
    return answer.status === 200 ? answer.body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the request's Basic credentials (parsed by `basic-auth`) are `expected` (`user:password`).
 * Both sides are hashed first, so the comparison takes the same time whatever the lengths.
 */
function authorized(request: IncomingMessage, expected: string): boolean {
  const given = parseBasicAuth(request);
  if (given === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(`${given.name}:${given.pass}`), digest(expected));
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
  response.end(body);
}
