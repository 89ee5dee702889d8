// Make-before-break through the real Envoy, over SotW and delta (issue 28): while a route is
// re-matched or removed under load, the cluster it no longer uses stays in Envoy until every Envoy
// connected (here the real one and a slow fake one that holds its route ACKs back) has ACKed the
// routes that stop using it, and a new cluster reaches Envoy before routes use it; no request that
// was valid before and after the change fails, and the old cluster is gone once the last ACK came.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { connectAds, type AdsClient, type AdsMode, type AdsResponse } from '../support/ads-client.js';
import { waitFor } from '../support/wait.js';
import { adminRequest } from '../../src/envoy/admin.js';
import {
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  typeUrl,
} from '../../src/proto/type-urls.js';
import type { Snapshot } from '../../src/xds/snapshot/types.js';

const MODES: ReadonlyArray<{ readonly ads: 'GRPC' | 'DELTA_GRPC'; readonly fake: AdsMode }> = [
  { ads: 'GRPC', fake: 'sotw' },
  { ads: 'DELTA_GRPC', fake: 'delta' },
];

/** Steady requests on `targets` ([host, path]) from a few loops, each status recorded, until `stop`. */
function load(
  port: number,
  targets: ReadonlyArray<readonly [string, string]>,
): {
  stop(): Promise<Map<string, number[]>>;
} {
  let running = true;
  const results = new Map<string, number[]>(targets.map(([host, path]) => [`${host}${path}`, []]));
  const loops = targets.flatMap(([host, path]) =>
    [0, 1].map(async () => {
      const statuses = results.get(`${host}${path}`) as number[];
      while (running)
        statuses.push(
          await proxyRequest(port, host, path).then(
            (r) => r.status,
            () => -1,
          ),
        );
    }),
  );
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return results;
    },
  };
}

const ROUTE_TYPE_URLS = new Set(
  [LISTENER_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE, ROUTE_CONFIGURATION_TYPE].map((type) => typeUrl(type)),
);

/**
 * A fake Envoy that subscribes to what Portcullis serves and ACKs clusters at once, but listeners,
 * scopes and routes only when told to (`holdRoutes` off, or `release()`): the slow Envoy a
 * retirement must wait for.
 */
class SlowEnvoy {
  holdRoutes = false;
  private readonly held: AdsResponse[] = [];

  constructor(readonly client: AdsClient) {
    void this.run();
  }

  /** ACKs what was held back, in order, and ACKs everything from now on. */
  release(): void {
    this.holdRoutes = false;
    for (const response of this.held.splice(0)) this.client.ack(response);
  }

  private async run(): Promise<void> {
    for (;;) {
      let response: AdsResponse;
      try {
        response = await this.client.next(600_000);
      } catch {
        return;
      }
      if (this.holdRoutes && ROUTE_TYPE_URLS.has(response.typeUrl)) this.held.push(response);
      else this.client.ack(response);
    }
  }
}

function slowEnvoy(portcullis: TestPortcullis, mode: AdsMode): SlowEnvoy {
  const { running } = portcullis;
  const client = connectAds(`127.0.0.1:${running.grpcPort}`, {
    mode,
    nodeId: 'slow-envoy',
    credential: running.grpcCredential,
  });
  const snapshot = running.store.current() as Snapshot;
  client.subscribe(typeUrl(CLUSTER_TYPE));
  client.subscribe(typeUrl(LISTENER_TYPE));
  client.subscribe(typeUrl(SCOPED_ROUTE_CONFIGURATION_TYPE));
  client.subscribe(typeUrl(ROUTE_CONFIGURATION_TYPE), [
    ...snapshot.resources[ROUTE_CONFIGURATION_TYPE].keys(),
  ]);
  return new SlowEnvoy(client);
}

/** Whether Envoy's admin `/clusters` lists `name`. */
async function envoyHasCluster(portcullis: TestPortcullis, name: string): Promise<boolean> {
  const body = (await adminRequest(portcullis.adminUrl, '/clusters', { timeoutMs: 5000 })).body;
  return body.split('\n').some((line) => line.startsWith(`${name}::`));
}

for (const mode of MODES) {
  describe(`make-before-break removal (${mode.fake})`, () => {
    let a: EchoUpstream;
    let b: EchoUpstream;
    let portcullis: TestPortcullis;
    let slow: SlowEnvoy;
    const routeA = (): Record<string, unknown> => ({
      allow_public_unauthenticated_access: true,
      from: 'https://a.test',
      to: a.url,
    });
    const routeB = (prefix: string): Record<string, unknown> => ({
      allow_public_unauthenticated_access: true,
      from: 'https://b.test',
      prefix,
      to: b.url,
    });

    before(async () => {
      a = await startEchoUpstream({ id: 'a' });
      b = await startEchoUpstream({ id: 'b' });
      portcullis = await startPortcullis({ routes: [routeA(), routeB('/api')] }, { adsApiType: mode.ads });
      // What the slow Envoy holds, as the ADS server reports it (AdsServer.onEvent).
      const held = new Map<string, string | undefined>();
      portcullis.running.ads.onEvent((event) => {
        if (event.nodeId === 'slow-envoy' && event.kind !== 'closed')
          held.set(event.type, event.kind === 'acked' ? event.version : undefined);
      });
      slow = slowEnvoy(portcullis, mode.fake);
      const current = portcullis.running.store.current() as Snapshot;
      await waitFor(
        async () =>
          ([LISTENER_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE, ROUTE_CONFIGURATION_TYPE] as const).every(
            (type) => held.get(type) === current.typeVersions[type],
          ),
        { what: 'the slow Envoy to hold the first config', timeoutMs: 15_000 },
      );
    });

    after(async () => {
      slow?.client.close();
      await portcullis?.stop();
      await a?.stop();
      await b?.stop();
    });

    /**
     * Writes `routes`, waits until the real Envoy serves them while the slow fake has not ACKed,
     * checks the dropped cluster is still in Envoy, lets the fake ACK, and waits for the cluster
     * to go. Returns the retired cluster names.
     */
    async function change(
      routes: readonly unknown[],
      live: () => Promise<boolean>,
    ): Promise<readonly string[]> {
      const { publisher } = portcullis.running;
      slow.holdRoutes = true;
      portcullis.writeConfig({ routes });
      await waitFor(async () => publisher.waiting && publisher.retiring().clusters.length > 0, {
        what: 'the new config to retire a cluster',
      });
      const retired = publisher.retiring().clusters;
      await waitFor(live, { what: 'the real Envoy to serve the new routes', timeoutMs: 15_000 });
      for (const name of retired)
        assert.ok(
          await envoyHasCluster(portcullis, name),
          `${name} stays while the slow Envoy has not ACKed`,
        );
      assert.ok(publisher.waiting, 'still waiting for the slow Envoy');
      slow.release();
      await waitFor(async () => !publisher.waiting, { what: 'the change to complete after the slow ACKs' });
      for (const name of retired) {
        await waitFor(async () => !(await envoyHasCluster(portcullis, name)), {
          what: `${name} to leave Envoy after the last ACK`,
          timeoutMs: 15_000,
        });
      }
      assert.deepEqual(publisher.retiring().clusters, []);
      return retired;
    }

    test('a re-matched route keeps its old cluster until every Envoy ACKed; no request fails', async () => {
      const traffic = load(portcullis.proxyPort, [
        ['a.test', '/'],
        ['b.test', '/api/x'],
      ]);
      let results: Map<string, number[]>;
      try {
        const retired = await change([routeA(), routeB('/api/')], async () => {
          const dump = (
            await adminRequest(portcullis.adminUrl, '/config_dump?resource=dynamic_route_configs')
          ).body;
          return dump.includes('"/api/"');
        });
        assert.ok(retired.length > 0);
      } finally {
        results = await traffic.stop();
      }
      for (const [target, statuses] of results) {
        const failed = statuses.filter((status) => status !== 200);
        assert.ok(statuses.length > 10, `${target}: a steady stream (${statuses.length})`);
        assert.deepEqual(failed, [], `${target}: ${failed.length} of ${statuses.length} failed`);
      }
    });

    test('a removed route answers 404 once live, its cluster leaves after the last ACK; A never fails', async () => {
      const traffic = load(portcullis.proxyPort, [['a.test', '/']]);
      let results: Map<string, number[]>;
      try {
        await change(
          [routeA()],
          async () => (await proxyRequest(portcullis.proxyPort, 'b.test', '/api/x')).status === 404,
        );
      } finally {
        results = await traffic.stop();
      }
      const statuses = results.get('a.test/') ?? [];
      const failed = statuses.filter((status) => status !== 200);
      assert.ok(statuses.length > 10, `a steady stream (${statuses.length})`);
      assert.deepEqual(failed, [], `${failed.length} of ${statuses.length} failed`);
    });
  });
}
