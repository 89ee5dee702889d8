import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bootstrap } from '../../src/envoy/bootstrap.js';
import { ROUTER_FILTER, staticHttpListener, staticLoopbackCluster } from '../support/static-envoy.js';

/**
 * Returns a copy of `bootstrap` with a static HTTP listener on 127.0.0.1:`listenPort` routing
 * everything to a static cluster at 127.0.0.1:`upstreamPort`. Lets supervisor tests put a real
 * request through Envoy without an ADS server. With `healthCheckPath`, the cluster is actively
 * health-checked on that path every 200 ms.
 */
export function addStaticHttpRoute(
  bootstrap: Bootstrap,
  listenPort: number,
  upstreamPort: number,
  options: { readonly healthCheckPath?: string } = {},
): Bootstrap {
  const copy = structuredClone(bootstrap) as Bootstrap & {
    static_resources: { clusters: unknown[]; listeners?: unknown[] };
  };
  copy.static_resources.clusters.push(
    staticLoopbackCluster(
      'test-upstream',
      upstreamPort,
      options.healthCheckPath === undefined
        ? {}
        : { health_checks: [fastHealthCheck(options.healthCheckPath)] },
    ),
  );
  copy.static_resources.listeners = [
    staticHttpListener('test-ingress', listenPort, {
      stat_prefix: 'test_ingress',
      route_config: {
        virtual_hosts: [
          {
            name: 'all',
            domains: ['*'],
            routes: [{ match: { prefix: '/' }, route: { cluster: 'test-upstream', timeout: '10s' } }],
          },
        ],
      },
      http_filters: [ROUTER_FILTER],
    }),
  ];
  return copy;
}

/** Active HTTP health check every 200 ms, one failure or success flips the host. */
function fastHealthCheck(path: string): Record<string, unknown> {
  return {
    timeout: '1s',
    interval: '0.2s',
    // Envoy checks idle clusters only every 60 s by default.
    no_traffic_interval: '0.2s',
    unhealthy_threshold: 1,
    healthy_threshold: 1,
    http_health_check: { path },
  };
}

/** An HTTP server on 127.0.0.1 that answers `slow done` after `delayMs`, counting requests received. */
export async function startSlowUpstream(
  delayMs: number,
): Promise<{ port: number; readonly received: number; close(): Promise<void> }> {
  let received = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    received += 1;
    req.resume();
    const timer = setTimeout(() => {
      timers.delete(timer);
      res.end('slow done');
    }, delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get received() {
      return received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
