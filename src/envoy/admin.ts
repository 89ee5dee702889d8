import { request } from 'node:http';
import { PortcullisError } from '../shared/errors.js';

/** Server states Envoy's admin `/ready` reports (`server.state`). */
export type EnvoyServerState = 'LIVE' | 'DRAINING' | 'PRE_INITIALIZING' | 'INITIALIZING';

/** One admin answer: HTTP status and body text. */
export interface AdminResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * Sends one request to Envoy's admin interface and returns status and body. Uses a fresh
 * connection each time (no pooling), so no idle socket outlives the call and keeps a test or a
 * shutting-down process alive. Rejects with `ENVOY_ADMIN_UNREACHABLE` on a network error or
 * after `timeoutMs` (default 2000), never hangs.
 */
export function adminRequest(
  adminUrl: string,
  path: string,
  options: { readonly method?: 'GET' | 'POST'; readonly timeoutMs?: number } = {},
): Promise<AdminResponse> {
  const url = new URL(path, adminUrl);
  const timeoutMs = options.timeoutMs ?? 2000;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', (err) => reject(unreachable(url, err)));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (err) => reject(unreachable(url, err)));
    req.end();
  });
}

/**
 * Turns the one-line `host:port` Envoy writes to `--admin-address-path` into a base URL.
 * IPv6 hosts get brackets. Undefined for empty or malformed content (file half-written).
 */
export function adminUrlFromAddress(text: string): string | undefined {
  const address = text.trim();
  const colon = address.lastIndexOf(':');
  if (colon <= 0 || colon === address.length - 1) return undefined;
  const host = address.slice(0, colon);
  const port = address.slice(colon + 1);
  if (!/^\d+$/.test(port)) return undefined;
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${bracketed}:${port}`;
}

/**
 * Sums `http.<prefix>.downstream_rq_active` over every HTTP connection manager except the
 * admin's own, from the admin `/stats` text. This is the number of requests still in flight,
 * which a graceful stop waits to reach zero.
 */
export function activeRequestsFromStats(statsText: string): number {
  let total = 0;
  for (const line of statsText.split('\n')) {
    const m = /^http\.(.+)\.downstream_rq_active: (\d+)$/.exec(line.trim());
    if (m === null || m[1] === 'admin') continue;
    total += Number(m[2]);
  }
  return total;
}

/**
 * Graceful drain through the admin interface: fail Envoy's health checks (so load balancers
 * stop sending), start a graceful listener drain, then poll until no request is in flight or
 * `graceMs` has passed, or `stillRunning()` turns false. Resolves either way once the wait is
 * over; rejects only if Envoy refuses the drain itself, so the caller can log it and stop anyway.
 */
export async function drainEnvoy(
  adminUrl: string,
  graceMs: number,
  stillRunning: () => boolean,
): Promise<void> {
  const deadline = Date.now() + graceMs;
  for (const path of ['/healthcheck/fail', '/drain_listeners?graceful']) {
    const res = await adminRequest(adminUrl, path, { method: 'POST' });
    if (res.status !== 200) {
      throw new PortcullisError(
        'ENVOY_DRAIN_FAILED',
        `POST ${path} answered ${res.status}: ${res.body.trim()}`,
      );
    }
  }
  while (stillRunning() && Date.now() < deadline) {
    const active = await adminRequest(adminUrl, '/stats?filter=downstream_rq_active$', { timeoutMs: 1000 })
      .then((r) => activeRequestsFromStats(r.body))
      .catch(() => 0); // admin gone: nothing left to wait for
    if (active === 0) return;
    await new Promise((r) => setTimeout(r, Math.min(100, Math.max(0, deadline - Date.now()))));
  }
}

function unreachable(url: URL, err: Error): PortcullisError {
  return new PortcullisError('ENVOY_ADMIN_UNREACHABLE', `Envoy admin ${url.href}: ${err.message}`, {
    cause: err,
  });
}
