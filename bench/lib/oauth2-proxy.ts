/**
 * oauth2-proxy, the peer the sign-in suite compares Portcullis with: built from source with
 * `go install` into the git-ignored `.tools/oauth2-proxy/`, started on loopback in front of the
 * benchmark's upstream with cookie sessions against the benchmark's local IdP.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from './context.js';
import { freePort } from './http.js';
import { BENCH_REPO } from './product.js';
import { logTail, until, whileRunning, type Started } from './processes.js';

/** The release measured (issue 24: "oauth2-proxy v7.15.6"). */
export const OAUTH2_PROXY_VERSION = 'v7.15.6';
const MODULE = `github.com/oauth2-proxy/oauth2-proxy/v7@${OAUTH2_PROXY_VERSION}`;
/**
 * Where `go install` puts the binary: under `.tools/`, which git ignores, or `OAUTH2_PROXY_DIR`
 * (e.g. when `.tools` is shared with another checkout).
 */
export const OAUTH2_PROXY_DIR = process.env['OAUTH2_PROXY_DIR'] ?? join(BENCH_REPO, '.tools', 'oauth2-proxy');
const BINARY = join(OAUTH2_PROXY_DIR, 'oauth2-proxy');
const BUILD_TIMEOUT_MS = 15 * 60_000;

/**
 * The oauth2-proxy binary, built first when it is not there yet (minutes: it downloads and
 * compiles the module). Throws, saying so, when `go` is missing or the build fails.
 */
export async function ensureOauth2Proxy(context: Context): Promise<string> {
  if (existsSync(BINARY)) return BINARY;
  mkdirSync(OAUTH2_PROXY_DIR, { recursive: true });
  context.progress(`building oauth2-proxy ${OAUTH2_PROXY_VERSION} with go install (takes minutes)`);
  const logFile = join(context.workDir, 'oauth2-proxy-build.log');
  const child = spawn('go', ['install', MODULE], {
    env: { ...process.env, GOBIN: OAUTH2_PROXY_DIR },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
  const code = await new Promise<number | string>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    child.once('exit', (exitCode, signal) => resolve(exitCode ?? signal ?? 'unknown'));
  });
  clearTimeout(killer);
  if (code === 'ENOENT')
    throw new Error(
      `go is missing: the sign-in suite builds oauth2-proxy ${OAUTH2_PROXY_VERSION} with \`go install ${MODULE}\` (install Go, https://go.dev/dl/); the other suites run without it (--only=...)`,
    );
  if (code !== 0 || !existsSync(BINARY))
    throw new Error(
      `go install ${MODULE} failed (${code}) (${logFile}):\n${output.trimEnd().split('\n').slice(-15).join('\n')}`,
    );
  return BINARY;
}

/** The IdP client oauth2-proxy signs in with (registered at the IdP with `redirectUri`). */
export interface Oauth2ProxyClient {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
}

/** A running oauth2-proxy. */
export interface Oauth2Proxy {
  readonly started: Started;
  readonly port: number;
  /** `http://127.0.0.1:<port>`: what users open. */
  readonly origin: string;
  stop(): Promise<void>;
}

/** Its `--redirect-url` on `port`: register this at the IdP before starting it. */
export function oauth2ProxyRedirectUri(port: number): string {
  return `http://127.0.0.1:${port}/oauth2/callback`;
}

/**
 * Starts oauth2-proxy on 127.0.0.1:`port` in front of `upstreamUrl`: OIDC against `client.issuer`
 * (plain http, which oauth2-proxy accepts as configured), cookie sessions (its default store),
 * PKCE S256 (as Portcullis does), any email domain, straight to the IdP without its own sign-in
 * button, `--cookie-secure=false` for plain http. Request logging is off, as Portcullis at
 * `log_level: warn` logs no line per request, so neither side pays for a log write the other
 * skips. Resolves once `/ping` answers 200.
 */
export async function startOauth2Proxy(
  context: Context,
  options: {
    readonly binary: string;
    readonly port: number;
    readonly upstreamUrl: string;
    readonly client: Oauth2ProxyClient;
    readonly timeoutMs: number;
  },
): Promise<Oauth2Proxy> {
  const origin = `http://127.0.0.1:${options.port}`;
  const args = [
    `--http-address=127.0.0.1:${options.port}`,
    `--upstream=${options.upstreamUrl}`,
    '--provider=oidc',
    `--oidc-issuer-url=${options.client.issuer}`,
    `--client-id=${options.client.clientId}`,
    `--client-secret=${options.client.clientSecret}`,
    `--redirect-url=${oauth2ProxyRedirectUri(options.port)}`,
    '--scope=openid email profile',
    '--code-challenge-method=S256',
    '--email-domain=*',
    '--insecure-oidc-allow-unverified-email=true',
    '--skip-provider-button=true',
    '--cookie-secure=false',
    // 32 characters: used as the raw AES-256 key.
    '--cookie-secret=bench-oauth2-proxy-cookie-secret',
    '--session-store-type=cookie',
    '--request-logging=false',
    '--silence-ping-logging=true',
  ];
  const started = context.groups.start({
    command: options.binary,
    args,
    cwd: context.workDir,
    env: { ...process.env },
    logFile: join(context.workDir, 'oauth2-proxy.log'),
    timeoutMs: options.timeoutMs,
  });
  const ping = async (): Promise<boolean> =>
    (await fetch(`${origin}/ping`, { signal: AbortSignal.timeout(2000) })).status === 200;
  try {
    await whileRunning(
      started,
      until(ping, 'oauth2-proxy to answer /ping', { intervalMs: 50, timeoutMs: 30_000 }),
    );
  } catch (err) {
    await started.stop(0);
    throw new Error(
      `oauth2-proxy did not start: ${err instanceof Error ? err.message : String(err)}\n${logTail(started.logFile)}`,
    );
  }
  return { started, port: options.port, origin, stop: () => started.stop(5000) };
}

/** A free loopback port for oauth2-proxy (needed before start: the IdP registers its redirect URI). */
export function oauth2ProxyPort(): Promise<number> {
  return freePort();
}
