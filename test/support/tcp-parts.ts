/**
 * The pieces around a TCP route in the real-parts tests and the tcp bench: a counting TCP echo
 * server (the upstream), a CONNECT proxy that sends `*.localhost` names to 127.0.0.1 (Node does not
 * resolve them; the client reaches it through HTTPS_PROXY, which it honours), a raw CONNECT through
 * TLS (Node's HTTP client), `portcullis tcp` as a child process, and a hashed bulk transfer.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer as createHttpServer, request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { waitFor } from './wait.js';

/** The repository root (where `src/cmd/main.ts` is). */
export const REPO_ROOT = new URL('../..', import.meta.url).pathname;

/** A TCP echo server on 127.0.0.1 that counts the connections it accepted and the bytes it read. */
export interface CountingEcho {
  readonly port: number;
  connections(): number;
  bytes(): number;
  close(): Promise<void>;
}

/** Starts a CountingEcho (half-close aware: the client's end ends the echo). */
export async function startCountingEcho(): Promise<CountingEcho> {
  let connections = 0;
  let bytes = 0;
  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    connections += 1;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    bytes: () => bytes,
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A plain HTTP CONNECT proxy on 127.0.0.1 that dials 127.0.0.1 for `*.localhost` (and `localhost`)
 * and refuses other names (403), as Chromium and systemd resolve those names. `authorities` lists
 * every CONNECT it got.
 */
export async function startLocalhostProxy(): Promise<{
  readonly port: number;
  readonly url: string;
  readonly authorities: string[];
  close(): Promise<void>;
}> {
  const authorities: string[] = [];
  const sockets = new Set<Duplex>();
  const server = createHttpServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    authorities.push(req.url ?? '');
    const target = new URL(`tcp://${req.url ?? ''}`);
    if (target.hostname !== 'localhost' && !target.hostname.endsWith('.localhost')) {
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: Number(target.port), allowHalfOpen: true });
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.once('connect', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    authorities,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What a raw CONNECT came to: the status and, for a refusal, the body (and the tunnel when 2xx). */
export interface RawConnectAnswer {
  readonly status: number;
  readonly body: string;
  readonly socket: Duplex;
}

/**
 * `CONNECT authority` over a TLS connection to 127.0.0.1:`port` (SNI `servername`, the test CA
 * trusted), with `Authorization: Portcullis <token>` when a token is given and `Accept:
 * application/json`. For a non-2xx answer the body is read (bounded: 5 s) and the socket closed.
 */
export async function rawConnect(options: {
  readonly port: number;
  readonly servername: string;
  readonly ca: string;
  readonly authority: string;
  readonly token?: string;
}): Promise<RawConnectAnswer> {
  const tls = tlsConnect({
    host: '127.0.0.1',
    port: options.port,
    servername: options.servername,
    ca: options.ca,
    ALPNProtocols: ['http/1.1'],
  });
  await once(tls, 'secureConnect');
  const headers: Record<string, string> = { host: options.authority, accept: 'application/json' };
  if (options.token !== undefined) headers.authorization = `Portcullis ${options.token}`;
  const req = request({
    method: 'CONNECT',
    path: options.authority,
    headers,
    createConnection: () => tls,
    timeout: 10_000,
  });
  req.once('timeout', () => req.destroy(new Error(`no answer to CONNECT ${options.authority}`)));
  req.end();
  const [res, socket, head] = (await once(req, 'connect')) as [IncomingMessage, Duplex, Buffer];
  const status = res.statusCode ?? 0;
  if (status >= 200 && status < 300) {
    if (head.length > 0) socket.unshift(head);
    return { status, body: '', socket };
  }
  const chunks = [head];
  const length = Number(res.headers['content-length'] ?? Number.NaN);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (Buffer.concat(chunks).length >= length) done();
    });
    socket.once('end', done);
    socket.once('close', done);
    socket.once('error', done);
    if (head.length >= length) done();
  });
  socket.destroy();
  return { status, body: Buffer.concat(chunks).toString('utf8'), socket };
}

/** A `portcullis` client command running as a child process (`node --import tsx src/cmd/main.ts`). */
export interface ClientProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Everything it wrote on stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
  /** The port of `listening on 127.0.0.1:PORT` (waits for the line, bounded). */
  listeningPort(): Promise<number>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** Starts `portcullis <args>` with exactly `env` (plus PATH) in the repository root. */
export function startClient(args: readonly string[], env: Readonly<Record<string, string>>): ClientProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cmd/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    child,
    stderr: () => stderr,
    exited,
    listeningPort: () =>
      waitFor(
        async () => {
          const match = /listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
          if (child.exitCode !== null) throw new Error(`the client exited: ${stderr}`);
          return match === null ? undefined : Number(match[1]);
        },
        { what: 'the client to print its listening address', timeoutMs: 20_000 },
      ),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The hashes and size of one bulk transfer through an echo (what was sent, what came back). */
export interface TransferResult {
  readonly sentSha256: string;
  readonly receivedSha256: string;
  readonly receivedBytes: number;
  readonly ms: number;
}

/**
 * Connects to 127.0.0.1:`port`, writes `totalBytes` of pseudo-random data (1 MiB blocks, honouring
 * back-pressure) while reading the echo until as many bytes came back (or the peer ended), hashing
 * both directions, then closes. It never half-closes first: Envoy's HTTP/1.1 CONNECT closes the
 * whole tunnel on a client's FIN. Rejects on a socket error or after `timeoutMs`.
 */
export async function echoTransfer(
  port: number,
  totalBytes: number,
  timeoutMs: number,
): Promise<TransferResult> {
  const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await once(socket, 'connect');
  return transferOver(socket, totalBytes, timeoutMs);
}

/** `echoTransfer` over an open duplex (a raw tunnel, say); the socket is destroyed at the end. */
export async function transferOver(
  socket: Duplex,
  totalBytes: number,
  timeoutMs: number,
): Promise<TransferResult> {
  const started = performance.now();
  const sent = createHash('sha256');
  const received = createHash('sha256');
  let receivedBytes = 0;
  const block = Buffer.alloc(1024 * 1024);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const reading = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received.update(chunk);
      receivedBytes += chunk.length;
      if (receivedBytes >= totalBytes) resolve();
    });
    socket.once('end', resolve);
    socket.once('close', resolve);
    socket.once('error', reject);
  });
  const writing = (async () => {
    for (let sentBytes = 0, n = 0; sentBytes < totalBytes; n += 1) {
      const chunk = Buffer.from(block.subarray(0, Math.min(block.length, totalBytes - sentBytes)));
      chunk.writeUInt32LE(n, 0); // every block differs, so a duplicated or dropped block changes the hash
      sent.update(chunk);
      sentBytes += chunk.length;
      if (!socket.write(chunk)) await Promise.race([once(socket, 'drain'), reading]);
      if (socket.destroyed) break;
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`the transfer did not finish within ${timeoutMs} ms (${receivedBytes} bytes back)`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([Promise.all([writing, reading]), deadline]);
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
  return {
    sentSha256: sent.digest('hex'),
    receivedSha256: received.digest('hex'),
    receivedBytes,
    ms: performance.now() - started,
  };
}

/**
 * Sends `message` over a fresh connection to 127.0.0.1:`port` and returns what came back: by
 * default it reads until as many bytes as it sent came back (or the peer ended), then closes; with
 * `halfClose` it half-closes right after sending and reads until the peer ends.
 */
export async function echoRoundTrip(port: number, message: string, halfClose = false): Promise<string> {
  const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  const chunks: Buffer[] = [];
  const expected = Buffer.byteLength(message);
  let size = 0;
  const answered = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (!halfClose && size >= expected) resolve();
    });
    socket.once('end', resolve);
    socket.once('close', resolve);
    socket.once('error', reject);
  });
  // Settled below; until then a refused connect must not count as an unhandled rejection.
  answered.catch(() => undefined);
  socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer through 127.0.0.1:${port}`)));
  await once(socket, 'connect');
  if (halfClose) socket.end(message);
  else socket.write(message);
  try {
    await answered;
  } finally {
    socket.destroy();
  }
  return Buffer.concat(chunks).toString('utf8');
}
