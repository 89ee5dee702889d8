import { clustersReady } from './envoy-admin.js';
import { freePort, statusOf } from './http.js';
import { freePortPair } from '../../test/support/ports.js';
import type { Listeners } from './config-gen.js';
import { until, whileRunning, type Started } from './processes.js';

/** Fresh loopback ports for one Portcullis + Envoy, with the URLs the benchmark uses. */
export interface Ports extends Listeners {
  readonly proxyPort: number;
  readonly adminUrl: string;
}

/** Picks free ports on 127.0.0.1 for Envoy's listener, Portcullis's gRPC port and Envoy's admin. */
export async function loopbackPorts(): Promise<Ports> {
  // Portcullis's own HTTP server takes the port after grpc_address's.
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  return {
    address: `127.0.0.1:${proxyPort}`,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    adminAddress: `127.0.0.1:${adminPort}`,
    proxyPort,
    adminUrl: `http://127.0.0.1:${adminPort}`,
  };
}

/**
 * Resolves once Envoy serves: at least `clusters` clusters active and none warming (a route to a
 * warming cluster answers 503), and every host in `hosts` answering 200 through the listener (with
 * no hosts, the listener answering 404 for an unknown host).
 * Polls every `intervalMs`; rejects after `timeoutMs`, or at once if `process` exits.
 */
export function waitServing(
  process: Started,
  ports: Ports,
  options: {
    readonly clusters: number;
    readonly hosts: readonly string[];
    readonly intervalMs: number;
    readonly timeoutMs: number;
  },
): Promise<void> {
  const serving = async (): Promise<boolean> => {
    if (!(await clustersReady(ports.adminUrl, options.clusters))) return false;
    if (options.hosts.length === 0) return (await statusOf(ports.proxyPort, 'unknown.bench.test')) === 404;
    const statuses = await Promise.all(options.hosts.map((host) => statusOf(ports.proxyPort, host)));
    return statuses.every((status) => status === 200);
  };
  return whileRunning(
    process,
    until(serving, `Envoy to serve ${options.clusters} clusters and ${options.hosts.length} sample hosts`, {
      intervalMs: options.intervalMs,
      timeoutMs: options.timeoutMs,
    }),
  );
}
