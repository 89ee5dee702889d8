import { createServer, type IncomingMessage, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/** What the echo upstream answers to every HTTP request (as JSON). */
export interface EchoResponse {
  readonly id: string;
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  /** Raw request target, query included. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A running echo upstream; see `startEchoUpstream`. */
export interface EchoUpstream {
  readonly id: string;
  /** Port on 127.0.0.1; stays the same across `stop()`/`restart()`. */
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Requests answered other than `/healthz`, WebSocket upgrades included. */
  readonly requests: number;
  /** `GET /healthz` requests answered. */
  readonly healthChecks: number;
  /** Answer everything (health checks and upgrades too) with `code`; 200 restores normal service. */
  setStatus(code: number): void;
  /** Zeroes both counters. */
  resetCounts(): void;
  /** Closes the listener and every open connection, WebSockets included. */
  stop(): Promise<void>;
  /** Listens again on the same port after `stop()`. */
  restart(): Promise<void>;
}

/**
 * Starts an HTTP upstream on 127.0.0.1 for integration tests. Every request gets JSON
 * `{id, method, path, url, headers}` so a test can tell which upstream Envoy picked and what
 * Envoy forwarded; `GET /healthz` is a cheap target for Envoy HTTP health checks. WebSocket
 * upgrades (any path) are accepted and each message is echoed back as `<id>:<message>`.
 */
export async function startEchoUpstream(options: {
  readonly id: string;
  readonly port?: number;
  /** The loopback address to listen on (default 127.0.0.1; Linux answers all of 127.0.0.0/8). */
  readonly host?: string;
}): Promise<EchoUpstream> {
  const { id } = options;
  const host = options.host ?? '127.0.0.1';
  let status = 200;
  let requests = 0;
  let healthChecks = 0;
  const wss = new WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(isBinary ? data : `${id}:${String(data)}`));
  });
  const server = createServer((req, res) => {
    const path = pathOf(req);
    if (path === '/healthz') healthChecks += 1;
    else requests += 1;
    req.resume();
    const body = JSON.stringify(echo(id, req, path));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    requests += 1;
    if (status !== 200) {
      socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(options.port ?? 0);
  return {
    id,
    port,
    url: `http://${host}:${port}`,
    get requests() {
      return requests;
    },
    get healthChecks() {
      return healthChecks;
    },
    setStatus(code) {
      if (!Number.isInteger(code) || code < 100 || code > 599) throw new Error(`not an HTTP status: ${code}`);
      status = code;
    },
    resetCounts() {
      requests = 0;
      healthChecks = 0;
    },
    stop() {
      for (const ws of wss.clients) ws.terminate();
      return new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    async restart() {
      if (!server.listening) await listen(port);
    },
  };
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function echo(id: string, req: IncomingMessage, path: string): EchoResponse {
  return { id, method: req.method ?? '', path, url: req.url ?? '', headers: req.headers };
}
