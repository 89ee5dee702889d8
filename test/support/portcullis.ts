import type { Session } from '../../src/session/session.js';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne, type AllInOneOptions } from '../../src/cmd/all-in-one.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { recordingLogger, type LogRecord, type Logger } from '../../src/shared/logger.js';
import type { SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import type { Snapshot } from '../../src/xds/snapshot/types.js';
import { freePort, freePortPair } from './ports.js';
import { waitFor } from './wait.js';
import type { EncodedResource } from '../../src/xds/snapshot/types.js';
import { identityProviderFor, NO_IDENTITY_PROVIDER } from '../../src/config/identity-provider.js';
import { parseConfig } from '../../src/config/parse-config.js';
import { SIGN_IN } from './sign-in-config.js';

/** A resource's version, or undefined for none. */
function versionOf(resource: EncodedResource | undefined): string | undefined {
  return resource?.version;
}

/**
 * The log levels of a test config unless it sets its own: every Portcullis line (the recording
 * logger keeps them all), and Envoy at `warn` as before `proxy_log_level` took effect: Envoy's
 * debug output is several lines per request.
 */
const LOG_LEVELS = { log_level: 'debug', proxy_log_level: 'warn' };

/** A Portcullis all-in-one with its real Envoy, started for a test on free loopback ports. */
export interface TestPortcullis {
  readonly running: AllInOne;
  /** Envoy's user-facing listener port on 127.0.0.1. */
  readonly proxyPort: number;
  readonly adminUrl: string;
  readonly configPath: string;
  readonly logs: LogRecord[];
  /** Replaces the config file atomically (temp file + rename), as editors do. */
  writeConfig(config: Record<string, unknown>): void;
  /** The config object with the test's ports filled in, for edits. */
  baseConfig(): Record<string, unknown>;
  /** Waits until Envoy has ACKed the store's current snapshot on every resource type. */
  waitForEnvoyToApply(what: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts Portcullis all-in-one in this process with `config` (routes and options; ports are
 * filled in; sign-in settings default to `SIGN_IN`, whose IdP is never contacted unless someone
 * signs in), writes it to a temp file, and waits until Envoy is LIVE with the config applied.
 */
export async function startPortcullis(
  config: Record<string, unknown>,
  options: {
    adsApiType?: 'DELTA_GRPC' | 'GRPC';
    /** Deadline of each identity-provider call (AllInOneOptions.idpTimeoutMs). */
    idpTimeoutMs?: number;
    /**
     * Envoy's listener address and port (default 127.0.0.1 and a free port): two instances on
     * 127.0.0.1 and 127.0.0.2 with one port serve the same URLs, as behind a load balancer.
     */
    listen?: { host: string; port: number };
    /** The process logger (default: a recording one, whose records are `logs`); a pino one has a level. */
    logger?: Logger & { level?: string };
    /** Test seam at the compile stage (StartOptions.afterCompile). */
    afterCompile?: AllInOneOptions['afterCompile'];
    /** The same, as a module the build worker imports (StartOptions.afterCompileModule). */
    afterCompileModule?: string;
  } = {},
): Promise<TestPortcullis> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-test-'));
  const configPath = join(dir, 'config.yaml');
  const [proxyPort, grpcPort, adminPort] = [
    options.listen?.port ?? (await freePort()),
    await freePortPair(),
    await freePort(),
  ];
  const base = {
    insecure_server: true,
    address: `${options.listen?.host ?? '127.0.0.1'}:${proxyPort}`,
    grpc_address: `127.0.0.1:${grpcPort}`,
    envoy_admin_address: `127.0.0.1:${adminPort}`,
  };
  /**
   * Reloads done (good or not) when the config was last written: the build of a write runs in the
   * build worker, so until a reload after it has finished, the store still serves the config before.
   */
  let loadsAtWrite: number | undefined;
  const loadsDone = (): number => {
    const stats = running.reloader.current();
    return stats.reloads + stats.failures;
  };
  const write = (next: Record<string, unknown>): void => {
    const temp = `${configPath}.tmp`;
    const text = stringify({ ...SIGN_IN, ...LOG_LEVELS, ...next, ...base });
    // The watcher reloads only a change (the same bytes are no change). Read before the rename, so
    // the reload the rename causes is the one waited for.
    const changed = !existsSync(configPath) || readFileSync(configPath, 'utf8') !== text;
    writeFileSync(temp, text);
    if (started && changed) loadsAtWrite = loadsDone();
    renameSync(temp, configPath);
  };
  let started = false;
  write(config);
  const recording = recordingLogger();
  const logger = options.logger ?? recording;
  const running = await startAllInOne({
    configPath,
    env: {},
    logger,
    adsApiType: options.adsApiType ?? 'DELTA_GRPC',
    reloadSettleMs: 20,
    ...(options.idpTimeoutMs === undefined ? {} : { idpTimeoutMs: options.idpTimeoutMs }),
    ...(options.afterCompile === undefined ? {} : { afterCompile: options.afterCompile }),
    ...(options.afterCompileModule === undefined ? {} : { afterCompileModule: options.afterCompileModule }),
  });
  recordSnapshots(running.store);
  started = true;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const harness: TestPortcullis = {
    running,
    proxyPort,
    adminUrl,
    configPath,
    logs: recording.records,
    writeConfig: write,
    baseConfig: () => ({ ...SIGN_IN, ...LOG_LEVELS, ...config, ...base }),
    async waitForEnvoyToApply(what) {
      const since = loadsAtWrite;
      await waitFor(
        async () => (since === undefined || loadsDone() > since) && envoyHasApplied(adminUrl, running),
        {
          what: `Envoy to apply ${what}`,
          timeoutMs: 15_000,
        },
      );
    },
    async stop() {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor(
      async () => (await adminRequest(adminUrl, '/ready', { timeoutMs: 1000 })).body.trim() === 'LIVE',
      { what: 'Envoy to report LIVE', timeoutMs: 30_000 },
    );
    await harness.waitForEnvoyToApply('the initial config');
  } catch (err) {
    await harness.stop();
    throw err;
  }
  return harness;
}

/**
 * The id of the identity-provider client of `SIGN_IN` (what every route of a test config without
 * its own client names): sessions a test writes into the store carry it (`Session.idpId`), or
 * routes treat them as absent.
 */
export const TEST_IDP_ID: string = testIdpId();

function testIdpId(): string {
  const { config } = parseConfig({
    document: { ...SIGN_IN, insecure_server: true },
    env: {},
    readText: () => '',
  });
  return (config === undefined ? undefined : identityProviderFor(config)?.id) ?? NO_IDENTITY_PROVIDER;
}

/** Every snapshot a store published since `recordSnapshots`, oldest first. */
const publishedSnapshots = new WeakMap<SnapshotStore, Snapshot[]>();

/**
 * Starts keeping `store`'s published snapshots, so `envoyHasApplied` can recognise a SotW
 * RouteConfiguration that kept the version of the response that last changed it.
 */
export function recordSnapshots(store: SnapshotStore): void {
  const history: Snapshot[] = [];
  const current = store.current();
  if (current !== undefined) history.push(current);
  publishedSnapshots.set(store, history);
  store.subscribe((snapshot) => history.push(snapshot));
}

/**
 * True when Envoy's own config dump shows the store's current snapshot: the route configuration
 * and every active cluster at the versions Portcullis sent (resource versions over delta xDS, type
 * versions over SotW), and no cluster left over from an older snapshot.
 */
export async function envoyHasApplied(adminUrl: string, running: AllInOne): Promise<boolean> {
  const snapshot = running.store.current();
  if (snapshot === undefined) return false;
  // A change still on its way through make-before-break steps is not applied yet.
  if (running.publisher.waiting) return false;
  const dump = JSON.parse((await adminRequest(adminUrl, '/config_dump', { timeoutMs: 5000 })).body) as {
    configs: {
      '@type': string;
      version_info?: string;
      dynamic_route_configs?: { version_info: string; route_config: { name: string } }[];
      dynamic_active_clusters?: { version_info: string; cluster: { name: string } }[];
    }[];
  };
  const routesType = 'envoy.config.route.v3.RouteConfiguration';
  const clustersType = 'envoy.config.cluster.v3.Cluster';
  const routesDump = dump.configs.find((config) => config['@type'].endsWith('.RoutesConfigDump'));
  const clustersDump = dump.configs.find((config) => config['@type'].endsWith('.ClustersConfigDump'));
  const routeDump = routesDump?.dynamic_route_configs ?? [];
  const clusterDump = clustersDump?.dynamic_active_clusters ?? [];
  const history = publishedSnapshots.get(running.store) ?? [snapshot];
  // Over SotW a resource carries the type version of the response that last changed it: any
  // published snapshot that held the resource exactly as it is now.
  const accepts = (type: typeof routesType | typeof clustersType, name: string, version: string): boolean => {
    const wanted = versionOf(snapshot.resources[type].get(name));
    return (
      version === snapshot.typeVersions[type] ||
      version === wanted ||
      history.some(
        (old) => old.typeVersions[type] === version && versionOf(old.resources[type].get(name)) === wanted,
      )
    );
  };
  const routesOk = [...snapshot.resources[routesType].keys()].every((name) =>
    routeDump.some(
      (entry) => entry.route_config.name === name && accepts(routesType, name, entry.version_info),
    ),
  );
  const wanted = snapshot.resources[clustersType];
  // Over SotW an unchanged cluster keeps the version of the response that last changed it, so the
  // dump's top-level version (the last CDS response applied) is what shows the whole set is current.
  const clustersOk =
    clusterDump.length === wanted.size &&
    clusterDump.every((entry) => wanted.has(entry.cluster.name)) &&
    (clustersDump?.version_info === snapshot.typeVersions[clustersType] ||
      clusterDump.every((entry) => entry.version_info === versionOf(wanted.get(entry.cluster.name))));
  // Scopes (per-host delivery) sit in one dump entry whose version is the type version Envoy
  // last applied, with every scope listed.
  const scopesType = 'envoy.config.route.v3.ScopedRouteConfiguration';
  const wantedScopes = snapshot.resources[scopesType];
  const scopedDump = dump.configs.find((config) => config['@type'].endsWith('.ScopedRoutesConfigDump')) as
    | {
        dynamic_scoped_route_configs?: { version_info?: string; scoped_route_configs?: { name: string }[] }[];
      }
    | undefined;
  const scoped = scopedDump?.dynamic_scoped_route_configs?.[0];
  const scopesOk =
    wantedScopes.size === 0 ||
    (scoped !== undefined &&
      (scoped.scoped_route_configs ?? []).length === wantedScopes.size &&
      (scoped.scoped_route_configs ?? []).every((entry) => wantedScopes.has(entry.name)) &&
      scoped.version_info === snapshot.typeVersions[scopesType]);
  return routesOk && clustersOk && scopesOk;
}

/** One HTTP response through Envoy: status, headers and the body (parsed as JSON when it is). */
export interface ProxyResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  json<T = Record<string, unknown>>(): T;
}

/** Sends one HTTP/1.1 request to Envoy's listener with the given Host; bounded by a 10 s timeout. */
export function proxyRequest(
  port: number,
  host: string,
  path: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<ProxyResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: { host, ...options.headers },
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${host}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Ada's session, valid for an hour, from the test IdP client: what tests write into the store
 * (`running.sessions.put`) to act as a signed-in user without an IdP. `overrides` change any field.
 */
export function adaSession(overrides: Partial<Session> = {}): Session {
  return {
    id: 'session-ada',
    userId: 'user-ada',
    email: 'ada@example.com',
    emailVerified: true,
    name: 'Ada Lovelace',
    groups: [],
    claims: { email: 'ada@example.com' },
    issuedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
    idpId: TEST_IDP_ID,
    ...overrides,
  };
}
