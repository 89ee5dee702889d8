/**
 * A real Envoy running what Portcullis compiles for a config with the fast path on, for
 * test/integration/fast-path-compiled.test.ts: the config is built by the production pipeline
 * (parse, translate, compile, snapshot), served by Portcullis's own ADS server from a snapshot
 * store, and ext_authz goes to a counting server (the config's `grpc_address`), so a test sees
 * whether Envoy asked. The ECDS resource (the revocations) is pushed through the store's overlay,
 * as the revocation feed does. Decision tokens are signed with the build's own decision key.
 */
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { buildYielding, type GoodBuild } from '../../src/runtime/build-pipeline.js';
import { recordingLogger, type LogRecord } from '../../src/shared/logger.js';
import { shortHash } from '../../src/shared/hash.js';
import { encodeMessage } from '../../src/proto/codec.js';
import { TYPED_EXTENSION_CONFIG_TYPE } from '../../src/proto/type-urls.js';
import { AdsServer } from '../../src/xds/server/ads-server.js';
import { SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import { compileFastPathRbac } from '../../src/xds/compile/fast-path-rbac.js';
import type { SigningKey } from '../../src/keys/signing-key.js';
import {
  DECISION_TOKEN_ISSUER,
  DECISION_TOKEN_TYPE,
  FAST_PATH_FILTER,
  decisionCookieName,
  type DecisionRevocation,
} from '../../src/contract/fast-path.js';
import { startCountingAuthz, type CountingAuthz } from './counting-authz.js';
import { startEnvoy, type RunningEnvoy } from './envoy.js';
import { freePort } from './ports.js';
import { proxyRequest } from './portcullis.js';
import { SIGN_IN } from './sign-in-config.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from './upstreams.js';
import { waitFor } from './wait.js';

/** The claims of a decision token (contract/fast-path.ts DECISION_CLAIMS), any of them optional. */
export interface TokenClaims {
  readonly sid?: unknown;
  readonly r?: unknown;
  readonly v?: unknown;
  readonly ja?: unknown;
  readonly h?: unknown;
  readonly iss?: string;
  readonly iat?: number;
  readonly exp?: number;
}

/**
 * Signs `claims` as a decision token with `key` (ES256, its kid, `typ` DECISION_TOKEN_TYPE). `iss`
 * defaults to DECISION_TOKEN_ISSUER, `iat` to now and `exp` to now + 120 s.
 */
export function signDecisionToken(key: SigningKey, claims: TokenClaims): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: DECISION_TOKEN_ISSUER, iat: now, exp: now + 120, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, typ: DECISION_TOKEN_TYPE })
    .sign(key.privateKey);
}

/** What one request through the Envoy came to. */
export interface Sent {
  readonly status: number;
  /** Checks the counting ext_authz server answered while the request ran. */
  readonly checks: number;
  /** The request headers the upstream saw; undefined when the request did not reach it. */
  readonly upstream: EchoResponse['headers'] | undefined;
}

/** A running compiled fast path; always `stop()` it. */
export interface CompiledFastPath {
  readonly build: GoodBuild;
  readonly envoy: RunningEnvoy;
  readonly authz: CountingAuthz;
  readonly store: SnapshotStore;
  /** Access-log lines (the supervisor's `request` records), oldest first. */
  readonly accessLog: () => readonly Record<string, unknown>[];
  /** Every record the Envoy supervisor logged (Envoy's own lines, redacted), oldest first. */
  readonly envoyLogs: () => readonly LogRecord[];
  /** The decision cookie's name. */
  readonly cookie: string;
  /**
   * Pushes `compileFastPathRbac(revocations, overflowed)` through the store's overlay and waits
   * until Envoy has loaded it (its ECDS reload counter moved).
   */
  pushRevocations(revocations: readonly DecisionRevocation[], overflowed?: boolean): Promise<void>;
  /** GET `path` on `host` with the decision `token` (beside `theme=dark`) and `headers`. */
  send(host: string, path: string, token?: string, headers?: Record<string, string>): Promise<Sent>;
  /** One counter from Envoy's admin `/stats` (0 when absent). */
  stat(name: string): Promise<number>;
  stop(): Promise<void>;
}

/** The ECDS reload counter of the fast-path filter. */
const RELOADS = `extension_config_discovery.http_filter.${FAST_PATH_FILTER}.config_reload`;

/**
 * Builds `config` (its routes' `to` may say `UPSTREAM`, replaced by the echo upstream's URL) with
 * Envoy's listener on a free port and ext_authz at the counting server, serves the snapshot over a
 * Portcullis ADS server, and starts Envoy; resolves once a request to `ready` is routed.
 */
export async function startCompiledFastPath(
  config: Record<string, unknown>,
  ready: { readonly host: string; readonly path: string },
): Promise<CompiledFastPath> {
  const cleanups: (() => Promise<void> | void)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const authz = await startCountingAuthz();
    cleanups.push(() => authz.stop());
    authz.answer({ kind: 'deny' });
    const upstream: EchoUpstream = await startEchoUpstream({ id: 'fast-path-compiled' });
    cleanups.push(() => upstream.stop());
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-fast-path-compiled-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const proxyPort = await freePort();
    const configPath = join(dir, 'config.yaml');
    const text = stringify({
      ...SIGN_IN,
      ...config,
      insecure_server: true,
      address: `127.0.0.1:${proxyPort}`,
      grpc_address: `127.0.0.1:${authz.port}`,
    }).replaceAll('UPSTREAM', upstream.url);
    writeFileSync(configPath, text);
    const build = await buildYielding({
      configPath,
      env: {},
      translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    });
    if (!build.ok) throw new Error(`the config did not build: ${JSON.stringify(build.problems)}`);
    const store = new SnapshotStore();
    store.publish(build.snapshot);
    const adsLog = recordingLogger();
    const ads = new AdsServer({ source: store, logger: adsLog, credential: build.keys.grpcCredential });
    const server = new grpc.Server();
    ads.register(server);
    const adsPort = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) =>
        err === null ? resolve(port) : reject(err),
      ),
    );
    cleanups.push(() => {
      ads.close();
      server.forceShutdown();
    });
    const logger = recordingLogger();
    const envoy = await startEnvoy({
      bootstrap: buildBootstrap({
        ads: { address: '127.0.0.1', port: adsPort, credential: build.keys.grpcCredential },
        admin: { port: 0 },
      }),
      logger,
      until: 'live',
    });
    cleanups.push(() => envoy.stop());
    await waitFor(async () => (await proxyRequest(proxyPort, ready.host, ready.path)).status !== 404, {
      what: `Envoy to route ${ready.host}${ready.path}`,
      timeoutMs: 20_000,
    }).catch((err: unknown) => {
      const rejected = adsLog.records.filter((record) => record.level !== 'debug' && record.level !== 'info');
      throw new Error(`${String(err)}\n${rejected.map((record) => JSON.stringify(record)).join('\n')}`, {
        cause: err,
      });
    });
    const stat = async (name: string): Promise<number> => {
      const body = await envoy.admin(
        `/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`,
      );
      const match = /:\s*(\d+)\s*$/m.exec(body);
      return match?.[1] === undefined ? 0 : Number(match[1]);
    };
    return {
      build,
      envoy,
      authz,
      store,
      cookie: decisionCookieName(build.ir.authorize.cookieName),
      envoyLogs: () => logger.records,
      accessLog: () =>
        logger.records
          .filter((record: LogRecord) => record.msg === 'request')
          .map((record: LogRecord) => (record.obj ?? {}) as Record<string, unknown>),
      async pushRevocations(revocations, overflowed = false) {
        const before = await stat(RELOADS);
        const bytes = encodeMessage(
          TYPED_EXTENSION_CONFIG_TYPE,
          compileFastPathRbac(revocations, overflowed),
        );
        store.overlay(
          new Map([[FAST_PATH_FILTER, { name: FAST_PATH_FILTER, version: shortHash(bytes), bytes }]]),
        );
        await waitFor(async () => (await stat(RELOADS)) > before, {
          what: 'Envoy to load the fast-path ECDS resource',
          timeoutMs: 10_000,
          intervalMs: 5,
        });
      },
      async send(host, path, token, headers = {}) {
        const before = authz.count;
        const cookie = `theme=dark${token === undefined ? '' : `; ${decisionCookieName(build.ir.authorize.cookieName)}=${token}`}`;
        const answer = await proxyRequest(proxyPort, host, path, { headers: { cookie, ...headers } });
        const upstreamHeaders = answer.status === 200 ? (answer.json() as EchoResponse).headers : undefined;
        return { status: answer.status, checks: authz.count - before, upstream: upstreamHeaders };
      },
      stat,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
