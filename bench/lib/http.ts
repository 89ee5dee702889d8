import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';

/** A port free on 127.0.0.1 a moment ago (the benchmark's processes bind it next). */
export async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A local upstream: answers every request (health checks included) with a 2-byte 200. */
export interface Upstream {
  readonly port: number;
  /** Headers of the last request it served. */
  lastHeaders(): IncomingHttpHeaders;
  stop(): Promise<void>;
}

/** Starts an upstream on 127.0.0.1 (an ephemeral port). */
export async function startUpstream(): Promise<Upstream> {
  let last: IncomingHttpHeaders = {};
  const server: Server = createServer((req, res) => {
    last = req.headers;
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 });
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    lastHeaders: () => last,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Options of one GET through Envoy's listener. */
export interface GetOptions {
  readonly headers?: Readonly<Record<string, string>>;
  /** A keep-alive agent to reuse connections; default a fresh connection. */
  readonly agent?: Agent;
  readonly timeoutMs?: number;
}

/** One answer: its status (0 when the request failed) and its headers. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
}

/** `GET /` with `Host: host` on 127.0.0.1:`port`: the status and headers, status 0 when the request failed. */
export function getAnswer(port: number, host: string, options: GetOptions = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        headers: { ...options.headers, host },
        agent: options.agent ?? false,
        timeout: options.timeoutMs ?? 2000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
        res.on('error', () => resolve({ status: 0, headers: {} }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, headers: {} }));
    req.end();
  });
}

/** Status of `GET /` with `Host: host` on 127.0.0.1:`port`, or 0 when the request failed. */
export async function statusOf(port: number, host: string, options: GetOptions = {}): Promise<number> {
  return (await getAnswer(port, host, options)).status;
}

/**
 * GETs `host` every `intervalMs` (a fresh connection each time) until it answers 200; resolves
 * with `performance.now()` of that answer, rejects after `timeoutMs`.
 */
export function pollUntil200(
  port: number,
  host: string,
  options: { readonly intervalMs: number; readonly timeoutMs: number },
): Promise<number> {
  return pollUntilStatus(port, host, (status) => status === 200, '200', options);
}

/**
 * GETs `host` every `intervalMs` (a fresh connection each time) until its status satisfies
 * `accept` (described as `wanted` in the error); resolves with `performance.now()` of that answer,
 * rejects after `timeoutMs` naming the statuses seen.
 */
export async function pollUntilStatus(
  port: number,
  host: string,
  accept: (status: number) => boolean,
  wanted: string,
  options: { readonly intervalMs: number; readonly timeoutMs: number },
): Promise<number> {
  const deadline = performance.now() + options.timeoutMs;
  const seen = new Map<number, number>();
  for (;;) {
    const status = await statusOf(port, host);
    const at = performance.now();
    if (accept(status)) return at;
    seen.set(status, (seen.get(status) ?? 0) + 1);
    if (at > deadline)
      throw new Error(
        `${host} did not answer ${wanted} in ${options.timeoutMs} ms (statuses ${[...seen].join(' ')})`,
      );
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
  }
}

/**
 * GETs every host in `hosts` through Envoy (`parallel` keep-alive connections) and counts the
 * statuses: proof that every route is in Envoy's table (404 means no route).
 */
export async function sweep(
  port: number,
  hosts: readonly string[],
  parallel = 8,
): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: parallel });
  const counts = new Map<number, number>();
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < hosts.length; index = next++) {
      const status = await statusOf(port, hosts[index] as string, { agent, timeoutMs: 5000 });
      counts.set(status, (counts.get(status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  agent.destroy();
  return counts;
}

/**
 * Status of `POST path` with `Host: host` on 127.0.0.1:`port` carrying `form` as an
 * `application/x-www-form-urlencoded` body (a fresh connection), or 0 when the request failed.
 */
export function postForm(
  port: number,
  host: string,
  path: string,
  form: Readonly<Record<string, string>>,
  options: GetOptions = {},
): Promise<number> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: {
          ...options.headers,
          host,
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
        },
        agent: options.agent ?? false,
        timeout: options.timeoutMs ?? 5000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(body);
  });
}
