/**
 * One real Envoy running the fast-path filter chain (fast-path-envoy.ts) with a counting ext_authz
 * server and an echo upstream, and a request helper that reports how many Checks a request caused
 * and what the upstream saw. For test/integration/fast-path-envoy.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordingLogger } from '../../src/shared/logger.js';
import { startCountingAuthz, type CountingAuthz } from './counting-authz.js';
import { makeDecisionKey, type DecisionKey } from './decision-tokens.js';
import { startEnvoy, type RunningEnvoy } from './envoy.js';
import {
  ASSERTION_COOKIE,
  TOKEN_COOKIE,
  fastPathBootstrap,
  shadowRbac,
  writeEcdsFile,
} from './fast-path-envoy.js';
import { freePort } from './ports.js';
import { startEchoUpstream, type EchoUpstream } from './upstreams.js';

/** What one request through the fast-path Envoy came to. */
export interface FastPathAnswer {
  readonly status: number;
  /** Checks the counting ext_authz server answered while this request ran. */
  readonly checks: number;
  /** The request headers the upstream saw (undefined when it was not reached). */
  readonly upstream: Readonly<Record<string, string | string[] | undefined>> | undefined;
  /** Local port of the client socket, to tell whether a keep-alive connection was reused. */
  readonly localPort: number | undefined;
}

/** A request's credentials and extras. */
export interface FastPathRequest {
  readonly token?: string;
  /** Value of the `_portcullis_as` cookie (the stand-in identity assertion). */
  readonly assertion?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** A keep-alive agent to reuse one connection; none: a fresh connection. */
  readonly agent?: Agent;
}

/** A running fast-path Envoy; always `stop()` it. */
export interface FastPathEnvoy {
  readonly port: number;
  readonly envoy: RunningEnvoy;
  readonly authz: CountingAuthz;
  readonly upstream: EchoUpstream;
  /** The key jwt_authn trusts. */
  readonly key: DecisionKey;
  /** The directory of the ECDS file (`writeEcdsFile(ecdsDir, ...)` pushes a new revocation map). */
  readonly ecdsDir: string;
  send(host: string, path: string, options?: FastPathRequest): Promise<FastPathAnswer>;
  /** One counter or gauge from admin `/stats` (0 when absent). */
  stat(name: string): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts the counting ext_authz server, the echo upstream and Envoy, with the ECDS file already
 * revoking `revoked` (and with `statPrefix` as the RBAC's `shadow_rules_stat_prefix`). Rejects
 * with Envoy's last log lines when it does not start.
 */
export async function startFastPathEnvoy(
  options: {
    readonly revoked?: readonly string[];
    readonly statPrefix?: string;
    /** fast-path-envoy.ts `FastPathOptions.sharedAudience`. */
    readonly sharedAudience?: boolean;
    /** fast-path-envoy.ts `FastPathOptions.earlyStrip`. */
    readonly earlyStrip?: boolean;
  } = {},
): Promise<FastPathEnvoy> {
  const key = await makeDecisionKey('fast-path-key');
  const authz = await startCountingAuthz();
  const upstream = await startEchoUpstream({ id: 'fast-path-upstream' });
  const ecdsDir = await mkdtemp(join(tmpdir(), 'portcullis-fast-path-'));
  await writeEcdsFile(ecdsDir, 'v0', shadowRbac(options.revoked ?? [], { statPrefix: options.statPrefix }));
  const port = await freePort();
  const logger = recordingLogger();
  const cleanUp = async (): Promise<void> => {
    await authz.stop();
    await upstream.stop();
    await rm(ecdsDir, { recursive: true, force: true });
  };
  let envoy: RunningEnvoy;
  try {
    envoy = await startEnvoy({
      bootstrap: fastPathBootstrap({
        listenPort: port,
        upstreamPort: upstream.port,
        authzPort: authz.port,
        jwks: key.jwks,
        ecdsDir,
        ...(options.statPrefix === undefined ? {} : { statPrefix: options.statPrefix }),
        ...(options.sharedAudience === undefined ? {} : { sharedAudience: options.sharedAudience }),
        ...(options.earlyStrip === undefined ? {} : { earlyStrip: options.earlyStrip }),
      }),
      logger,
    });
  } catch (err) {
    await cleanUp();
    const lines = logger.records.slice(-10).map((r) => JSON.stringify(r));
    throw new Error(`the fast-path Envoy did not start: ${String(err)}\n${lines.join('\n')}`, { cause: err });
  }
  return {
    port,
    envoy,
    authz,
    upstream,
    key,
    ecdsDir,
    async send(host, path, request = {}) {
      const before = authz.count;
      const answer = await get(port, host, path, request);
      const upstreamHeaders =
        answer.status === 200
          ? (JSON.parse(answer.body) as { headers: Record<string, string | string[] | undefined> }).headers
          : undefined;
      return {
        status: answer.status,
        checks: authz.count - before,
        upstream: upstreamHeaders,
        localPort: answer.localPort,
      };
    },
    async stat(name) {
      const text = await envoy.admin(
        `/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`,
      );
      const match = /:\s*(\d+)\s*$/m.exec(text);
      return match?.[1] === undefined ? 0 : Number(match[1]);
    },
    async stop() {
      await envoy.stop();
      await cleanUp();
    },
  };
}

function cookieHeader(request: FastPathRequest): Record<string, string> {
  const crumbs: string[] = [];
  if (request.token !== undefined) crumbs.push(`${TOKEN_COOKIE}=${request.token}`);
  if (request.assertion !== undefined) crumbs.push(`${ASSERTION_COOKIE}=${request.assertion}`);
  return crumbs.length === 0 ? {} : { cookie: crumbs.join('; ') };
}

/** One HTTP/1.1 GET to 127.0.0.1:`port` with Host `host`, bounded by 10 s. */
function get(
  port: number,
  host: string,
  path: string,
  options: FastPathRequest,
): Promise<{ status: number; body: string; localPort: number | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        headers: { host, ...cookieHeader(options), ...options.headers },
        agent: options.agent ?? false,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const localPort = res.socket.localPort;
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), localPort }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${host}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
