import { adminRequest, type EnvoyServerState } from '../../src/envoy/admin.js';
import type { Bootstrap } from '../../src/envoy/bootstrap.js';
import { type LocatedEnvoy, locateEnvoy } from '../../src/envoy/locate.js';
import { EnvoySupervisor, type RestartPolicy } from '../../src/envoy/supervisor.js';
import { type Logger, silentLogger } from '../../src/shared/logger.js';

/** Options for `startEnvoy`. */
export interface StartEnvoyOptions {
  /** Bootstrap object; give it admin port 0 (`buildBootstrap({ admin: { port: 0 } })`) so runs never collide. */
  readonly bootstrap: Bootstrap;
  readonly logger?: Logger;
  /** Restart policy; default `false` (a dead Envoy stays dead, so the test sees it). */
  readonly restart?: RestartPolicy | false;
  /**
   * What to wait for before resolving: `admin` (default) = admin answers `/ready` in any state
   * (enough when no ADS server runs); `live` = Envoy reports LIVE (ADS answered or timed out).
   */
  readonly until?: 'admin' | 'live';
  /** Bound on that wait. Default 30 s. */
  readonly timeoutMs?: number;
}

/** A real Envoy started for a test. Always `stop()` it (in `after`/`t.after`). */
export interface RunningEnvoy {
  /** The binary that runs, with its version. */
  readonly envoy: LocatedEnvoy;
  /** Admin base URL of the current process (`http://127.0.0.1:PORT`); throws when none runs. */
  readonly adminUrl: string;
  /** GET (or POST) an admin path such as `/clusters` and return the body; throws on non-2xx. */
  admin(path: string, method?: 'GET' | 'POST'): Promise<string>;
  /** Stops Envoy (no drain unless `graceMs` is given) and removes its work dir. */
  stop(options?: { readonly graceMs?: number }): Promise<void>;
  readonly supervisor: EnvoySupervisor;
}

const ANY_STATE: readonly EnvoyServerState[] = ['PRE_INITIALIZING', 'INITIALIZING', 'LIVE', 'DRAINING'];

/**
 * Starts the real Envoy (found by `locateEnvoy`) under `EnvoySupervisor` and waits until its
 * admin answers. When Envoy is missing this rejects with the `ENVOY_NOT_FOUND` error on purpose:
 * integration tests must fail loudly, never skip.
 */
export async function startEnvoy(options: StartEnvoyOptions): Promise<RunningEnvoy> {
  const envoy = await locateEnvoy();
  const supervisor = new EnvoySupervisor({
    binary: envoy.path,
    bootstrap: options.bootstrap,
    logger: options.logger ?? silentLogger,
    restart: options.restart ?? false,
  });
  await supervisor.start();
  try {
    await supervisor.waitReady(options.timeoutMs ?? 30_000, options.until === 'live' ? ['LIVE'] : ANY_STATE);
  } catch (err) {
    await supervisor.stop();
    throw err;
  }
  const currentAdmin = (): string => {
    const url = supervisor.adminUrl;
    if (url === undefined) throw new Error(`no Envoy admin: supervisor is ${supervisor.state}`);
    return url;
  };
  return {
    envoy,
    supervisor,
    get adminUrl() {
      return currentAdmin();
    },
    async admin(path, method = 'GET') {
      const res = await adminRequest(currentAdmin(), path, { method, timeoutMs: 5000 });
      if (res.status < 200 || res.status > 299) {
        throw new Error(`Envoy admin ${method} ${path} answered ${res.status}: ${res.body.slice(0, 500)}`);
      }
      return res.body;
    },
    stop: (stopOptions) => supervisor.stop(stopOptions ?? {}),
  };
}

/** Health of one upstream host as the admin `/clusters` page reports it. */
export interface HostHealth {
  /** Raw flags, e.g. `['healthy']` or `['failed_active_hc', 'active_hc_timeout']`. */
  readonly flags: readonly string[];
  /** True when the only flag is `healthy`. */
  readonly healthy: boolean;
}

/**
 * Reads admin `/clusters` and returns `host:port -> health` for `clusterName`. The text format
 * is one `cluster::host::stat::value` line per fact; only `health_flags` lines are used. An
 * empty map means Envoy knows no hosts for that cluster (yet).
 */
export async function clusterHealth(adminUrl: string, clusterName: string): Promise<Map<string, HostHealth>> {
  const res = await adminRequest(adminUrl, '/clusters', { timeoutMs: 5000 });
  return parseClusterHealth(res.body, clusterName);
}

/** The pure half of `clusterHealth`, for a `/clusters` body already fetched. */
export function parseClusterHealth(clustersText: string, clusterName: string): Map<string, HostHealth> {
  const hosts = new Map<string, HostHealth>();
  const prefix = `${clusterName}::`;
  const marker = '::health_flags::';
  for (const line of clustersText.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const at = line.indexOf(marker, prefix.length);
    if (at < 0) continue;
    const flags = line
      .slice(at + marker.length)
      .trim()
      .split('/')
      .filter((f) => f !== '');
    const host = line.slice(prefix.length, at);
    hosts.set(host, { flags, healthy: flags.length === 1 && flags[0] === 'healthy' });
  }
  return hosts;
}
