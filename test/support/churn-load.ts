import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { parseCookie, parseSetCookie, stringifyCookie } from 'cookie';

/** One host the load requests, with the headers it needs (a session cookie for protected routes). */
export interface LoadTarget {
  readonly host: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** One request that did not end in a 2xx: what happened, on which host, during which change. */
export interface LoadFailure {
  /** `503 no healthy upstream`, `503 (empty body)`, `error ECONNRESET on a reused connection`, ... */
  readonly kind: string;
  readonly host: string;
  /** The label `mark` had set when the request was sent: the change in progress. */
  readonly during: string;
  /** The label when it ended (differs from `during` for a request in flight across a `mark`). */
  readonly endedDuring: string;
  /** Milliseconds since the load started. */
  readonly atMs: number;
}

/** What a load saw. */
export interface LoadReport {
  readonly requests: number;
  readonly ok: number;
  readonly failures: readonly LoadFailure[];
  /** Failures counted by kind, then by the change in progress: `{ '503 (empty body)': { 'to re-weighted': 2 } }`. */
  readonly byKind: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly durationMs: number;
}

/** A running load. */
export interface Load {
  /** Labels the requests from now on (the change being applied), for the failure report. */
  mark(label: string): void;
  /** Requests finished so far. */
  readonly requests: number;
  /** Stops sending, waits for the requests in flight, closes the connections, and reports. */
  stop(): Promise<LoadReport>;
}

/**
 * Starts a steady load on Envoy's listener at 127.0.0.1:`port`: `connections` workers, each one
 * request at a time on its own keep-alive connection (HTTP/1.1; TLS with `https`, any certificate
 * accepted so a replaced one keeps working), cycling through `targets`. Every answer other than a
 * 2xx and every socket error is recorded with its kind and the `mark` in force, so a test can fail
 * with the drops counted by kind. A reset on a connection that had served requests before is
 * labelled as such: an idle keep-alive connection closed by Envoy as a request goes out.
 */
export function startLoad(options: {
  readonly port: number;
  readonly targets: readonly LoadTarget[];
  readonly connections: number;
  readonly https?: boolean;
  /** Per-request bound. Default 10 s. */
  readonly timeoutMs?: number;
  /**
   * Each worker keeps the cookies answers set, per host, and sends them back with the target's
   * own, like a browser (e.g. the fast path's decision cookie). Default false: only the target's.
   */
  readonly keepCookies?: boolean;
}): Load {
  const started = performance.now();
  const failures: LoadFailure[] = [];
  let label = 'start';
  let requests = 0;
  let ok = 0;
  let running = true;
  const agents: (HttpAgent | HttpsAgent)[] = [];
  const worker = async (offset: number): Promise<void> => {
    const agent = options.https
      ? new HttpsAgent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
      : new HttpAgent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    const jar = options.keepCookies === true ? new HostCookies() : undefined;
    for (let i = offset; running; i++) {
      const target = options.targets[i % options.targets.length] as LoadTarget;
      const during = label;
      const outcome = await send(options, agent, target, jar);
      requests += 1;
      if (outcome === 'ok') ok += 1;
      else
        failures.push({
          kind: outcome,
          host: target.host,
          during,
          endedDuring: label,
          atMs: Math.round(performance.now() - started),
        });
    }
  };
  const workers = Array.from({ length: options.connections }, (_, i) => worker(i));
  return {
    mark(next) {
      label = next;
    },
    get requests() {
      return requests;
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      for (const agent of agents) agent.destroy();
      return {
        requests,
        ok,
        failures,
        byKind: countByKind(failures),
        durationMs: performance.now() - started,
      };
    },
  };
}

/** Cookie values are opaque: kept and sent back byte for byte. */
const opaque = (value: string): string => value;

/** The cookies answers set, per host (name and value only: enough for one loopback listener). */
class HostCookies {
  readonly #byHost = new Map<string, Map<string, string>>();

  /** Stores `setCookies` answered for `host`; an expired one deletes its cookie. */
  store(host: string, setCookies: readonly string[]): void {
    if (setCookies.length === 0) return;
    const cookies = this.#byHost.get(host) ?? new Map<string, string>();
    for (const line of setCookies) {
      const cookie = parseSetCookie(line, { decode: opaque });
      const expired =
        (cookie.maxAge !== undefined && cookie.maxAge <= 0) ||
        (cookie.expires !== undefined && cookie.expires.getTime() <= Date.now());
      if (expired) cookies.delete(cookie.name);
      else cookies.set(cookie.name, cookie.value ?? '');
    }
    this.#byHost.set(host, cookies);
  }

  /** `header` (the target's own Cookie header, if any) with the kept cookies of `host` added. */
  header(host: string, header: string | undefined): string | undefined {
    const kept = this.#byHost.get(host);
    if (kept === undefined || kept.size === 0) return header;
    const own = header === undefined ? {} : parseCookie(header, { decode: opaque });
    return stringifyCookie({ ...own, ...Object.fromEntries(kept) } as Record<string, string>, {
      encode: opaque,
    });
  }
}

/** One GET: 'ok' for a 2xx, else the failure's kind. With `jar`, its cookies go along and it keeps what the answer sets. */
function send(
  options: { readonly port: number; readonly https?: boolean; readonly timeoutMs?: number },
  agent: HttpAgent | HttpsAgent,
  target: LoadTarget,
  jar?: HostCookies,
): Promise<string> {
  return new Promise((resolve) => {
    const request = options.https ? httpsRequest : httpRequest;
    let reused = false;
    const headers: Record<string, string> = {
      ...target.headers,
      host: target.host,
      accept: 'application/json',
    };
    const cookie = jar?.header(target.host, target.headers?.['cookie']);
    if (cookie !== undefined) headers['cookie'] = cookie;
    const req = request(
      {
        host: '127.0.0.1',
        port: options.port,
        path: '/churn',
        headers,
        agent,
        servername: target.host,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res: IncomingMessage) => {
        jar?.store(target.host, res.headers['set-cookie'] ?? []);
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err: NodeJS.ErrnoException) =>
          resolve(`error ${err.code ?? err.message} mid-response`),
        );
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) return resolve('ok');
          const body = Buffer.concat(chunks).toString('utf8').trim().slice(0, 60);
          resolve(`${status} ${body === '' ? '(empty body)' : body}`);
        });
      },
    );
    req.on('socket', (socket) => {
      // A socket that already served a request is handed out connected.
      reused = !socket.connecting;
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve(`error ${err.code ?? err.message}${reused ? ' on a reused connection' : ''}`),
    );
    req.end();
  });
}

function countByKind(failures: readonly LoadFailure[]): Record<string, Record<string, number>> {
  const counts: Record<string, Record<string, number>> = {};
  for (const failure of failures) {
    const perChange = (counts[failure.kind] ??= {});
    perChange[failure.during] = (perChange[failure.during] ?? 0) + 1;
  }
  return counts;
}

/** A one-line summary of a report for assertion messages: requests, then failures by kind and change. */
export function describeLoad(report: LoadReport): string {
  const kinds = Object.entries(report.byKind).map(
    ([kind, during]) =>
      `${kind}: ${Object.entries(during)
        .map(([change, n]) => `${n} during ${change}`)
        .join(', ')}`,
  );
  return `${report.failures.length} of ${report.requests} requests failed${kinds.length > 0 ? `: ${kinds.join('; ')}` : ''}`;
}
