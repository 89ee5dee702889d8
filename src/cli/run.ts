/**
 * `portcullis login` and `portcullis tcp`: the client commands, from parsed arguments to an exit
 * code. Every failure is one line on stderr (`portcullis: ...`), never a stack trace; the token is
 * never printed. Everything the commands touch outside comes in `ClientIo`, so tests run them
 * in-process with their own streams, environment and browser.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import { systemBrowserOpener } from './browser.js';
import type { BrowserOpener } from './browser.js';
import { hostPort, parseOrigin, resolveEndpoint } from './endpoint.js';
import type { PortcullisEndpoint, TlsTrust } from './endpoint.js';
import { signIn } from './login.js';
import type { SignInOptions } from './login.js';
import { cacheKey, fileTokenCache, tokenCachePath } from './token-cache.js';
import { TunnelSessions } from './h2-tunnel.js';
import { TokenSource, openTunnel, splice } from './tunnel.js';

/** How long a sign-in may wait for the browser. */
export const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

/** The process around a client command. */
export interface ClientIo {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
  /** XDG_CONFIG_HOME, HOME (token cache), BROWSER; HTTPS_PROXY/NO_PROXY are read from process.env. */
  readonly env: NodeJS.ProcessEnv;
  /** Ctrl-C: cancels a sign-in, stops a listener. */
  readonly signal: AbortSignal;
  /** Replaces the system browser (tests). */
  readonly openBrowser?: BrowserOpener;
  readonly signInTimeoutMs?: number;
}

/** Flags both commands take. */
export interface ConnectionArgs {
  readonly via?: string | undefined;
  /** false with --no-browser. */
  readonly browser: boolean;
  readonly caCert?: string | undefined;
  readonly insecureSkipVerify: boolean;
}

/** `portcullis login --url https://app.example.com`. */
export interface LoginArgs extends ConnectionArgs {
  readonly url: string;
}

/** `portcullis tcp db.example.com:5432 [--listen addr | --listen -] [--verbose]`. */
export interface TcpArgs extends ConnectionArgs {
  readonly target: string;
  readonly listen?: string | undefined;
  /** Extra stderr lines about the connection (e.g. the fallback to HTTP/1.1 CONNECT). */
  readonly verbose?: boolean | undefined;
}

/** Signs in to the route at `args.url` and caches its token; 0 when signed in. */
export async function runLogin(args: LoginArgs, io: ClientIo): Promise<number> {
  return reported(io, async () => {
    const endpoint = await endpointFrom(parseOrigin(args.url, '--url'), args);
    const token = await signIn(signInOptions(endpoint, args, io));
    const path = tokenCachePath(io.env);
    await fileTokenCache(path).put(cacheKey(endpoint.origin), token);
    io.stderr.write(`portcullis: signed in to ${endpoint.origin.host}; the token is cached in ${path}\n`);
    return 0;
  });
}

/**
 * Tunnels to `args.target` through Portcullis: stdin/stdout with `--listen -` (exit code 0 when the
 * target closed the connection), else a local listener (default 127.0.0.1 on a free port, printed
 * on stderr) that serves until Ctrl-C, each connection its own tunnel.
 */
export async function runTcp(args: TcpArgs, io: ClientIo): Promise<number> {
  return reported(io, async () => {
    const authority = parseAuthority(args.target);
    const route = new URL(`https://${authority.hostname}`);
    const endpoint = await endpointFrom(route, args);
    const tokens = new TokenSource(fileTokenCache(tokenCachePath(io.env)), cacheKey(endpoint.origin), () =>
      signIn(signInOptions(endpoint, args, io)),
    );
    const debug = (line: string): void => {
      if (args.verbose === true) io.stderr.write(`portcullis: ${line}\n`);
    };
    const sessions = new TunnelSessions(endpoint, debug);
    try {
      if (args.listen === '-') {
        await splice(io.stdin, io.stdout, await openTunnel(endpoint, sessions, authority.host, tokens), true);
        return 0;
      }
      const tunnel = { authority: authority.host, endpoint, sessions, tokens };
      await serveListener(parseListen(args.listen ?? '127.0.0.1:0'), tunnel, io);
      return 0;
    } finally {
      sessions.close();
    }
  });
}

/** Runs `body`, turning any failure into one stderr line and an exit code (130: cancelled). */
async function reported(io: ClientIo, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (err) {
    io.stderr.write(`portcullis: ${errorMessage(err)}\n`);
    return err instanceof PortcullisError && err.code === 'CLIENT_ABORTED' ? 130 : 1;
  }
}

async function endpointFrom(route: URL, args: ConnectionArgs): Promise<PortcullisEndpoint> {
  const via = args.via === undefined ? undefined : parseOrigin(args.via, '--via');
  return resolveEndpoint(route, via, await trustFrom(args));
}

async function trustFrom(args: ConnectionArgs): Promise<TlsTrust> {
  if (args.caCert !== undefined && args.insecureSkipVerify)
    throw new PortcullisError('CLIENT_USAGE', 'give --ca-cert or --insecure-skip-verify, not both');
  if (args.caCert === undefined) return { insecureSkipVerify: args.insecureSkipVerify };
  try {
    return { ca: await readFile(args.caCert, 'utf8'), insecureSkipVerify: false };
  } catch (err) {
    throw new PortcullisError('CLIENT_USAGE', `cannot read --ca-cert ${args.caCert}: ${errorMessage(err)}`);
  }
}

function signInOptions(endpoint: PortcullisEndpoint, args: ConnectionArgs, io: ClientIo): SignInOptions {
  return {
    endpoint,
    openBrowser: args.browser ? (io.openBrowser ?? systemBrowserOpener(io.env, process.platform)) : undefined,
    stderr: io.stderr,
    timeoutMs: io.signInTimeoutMs ?? SIGN_IN_TIMEOUT_MS,
    signal: io.signal,
  };
}

/** `host:port` of the CONNECT target (a port is required); `host` keeps IPv6 brackets. */
export function parseAuthority(target: string): { host: string; hostname: string } {
  let url: URL | undefined;
  try {
    url = new URL(`tcp://${target}`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.port === '' || url.host !== target.toLowerCase() || url.username !== '')
    throw new PortcullisError(
      'CLIENT_USAGE',
      `the target must be host:port (as in the route's from), got "${target}"`,
    );
  return { host: url.host, hostname: url.hostname.replace(/^\[(.*)\]$/, '$1') };
}

/** `--listen host:port` (port 0: any free port). */
function parseListen(value: string): { host: string; port: number } {
  let url: URL | undefined;
  try {
    url = new URL(`tcp://${value}`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.hostname === '' || url.pathname !== '' || url.username !== '')
    throw new PortcullisError('CLIENT_USAGE', `--listen must be host:port or -, got "${value}"`);
  return { host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port: url.port === '' ? 0 : Number(url.port) };
}

/**
 * The local listener: each connection opens its own tunnel; a failure is one stderr line and that
 * connection is closed, the listener keeps serving. Resolves when `io.signal` aborts (open
 * connections are closed).
 */
async function serveListener(
  listen: { host: string; port: number },
  tunnel: {
    authority: string;
    endpoint: PortcullisEndpoint;
    sessions: TunnelSessions;
    tokens: TokenSource;
  },
  io: ClientIo,
): Promise<void> {
  const { authority, endpoint, sessions, tokens } = tunnel;
  const open = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true, pauseOnConnect: true }, (local) => {
    open.add(local);
    local.once('close', () => open.delete(local));
    local.on('error', () => local.destroy());
    openTunnel(endpoint, sessions, authority, tokens)
      .then((remote) => splice(local, local, remote))
      .catch((err: unknown) => {
        if (!local.destroyed) io.stderr.write(`portcullis: ${errorMessage(err)}\n`);
      })
      .finally(() => local.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        new PortcullisError(
          'CLIENT_USAGE',
          `cannot listen on ${hostPort(listen.host, listen.port)}: ${errorMessage(err)}`,
        ),
      ),
    );
    server.listen(listen.port, listen.host, resolve);
  });
  const address = server.address() as AddressInfo;
  io.stderr.write(
    `portcullis: listening on ${hostPort(address.address, address.port)}; connections go to ${authority} through ${endpoint.origin.host}\n`,
  );
  await new Promise<void>((resolve) => {
    if (io.signal.aborted) resolve();
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  server.close();
  for (const socket of open) socket.destroy();
}
