import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildSnapshot,
  CDS,
  cluster,
  deltaConverged,
  EDS,
  endpoints,
  sotwConverged,
  withServer,
} from './helpers.js';

const CLUSTER = 'envoy.config.cluster.v3.Cluster';
const BOTH = [CLUSTER, 'envoy.config.endpoint.v3.ClusterLoadAssignment'] as const;
const COUNT = 10_000;

function bigSpec(changed = -1): Parameters<typeof buildSnapshot>[0] {
  const names = Array.from({ length: COUNT }, (_, i) => `c${i}`);
  return {
    clusters: names.map((name, i) => cluster(name, i === changed ? { lb_policy: 'RANDOM' } : {})),
    endpoints: names.map((name, i) => endpoints(name, 10_000 + (i % 50_000))),
  };
}

describe('ADS at 10,000 resources', () => {
  it('serves SotW and delta clients and pushes a one-cluster change cheaply', { timeout: 60_000 }, () =>
    withServer(async ({ server, connect }) => {
      const first = buildSnapshot(bigSpec());
      server.source.publish(first);
      const sotw = [connect('sotw', 's1'), connect('sotw', 's2')];
      const delta = [connect('delta', 'd1'), connect('delta', 'd2')];
      const names = [...first.resources[CLUSTER].keys()];
      for (const client of [...sotw, ...delta]) {
        client.subscribe(CDS);
        client.subscribe(EDS, names);
      }
      await Promise.all([
        ...sotw.map((c) => c.ackAll(() => sotwConverged(c, first, BOTH), 20_000)),
        ...delta.map((c) => c.ackAll(() => deltaConverged(c, first, BOTH), 20_000)),
      ]);

      const second = buildSnapshot(bigSpec(1234));
      const started = performance.now();
      server.source.publish(second); // fan-out is synchronous: every stream has written when this returns
      const fanOutMs = performance.now() - started;
      assert.ok(fanOutMs < 2000, `fan-out to 4 streams took ${fanOutMs.toFixed(0)} ms`);

      for (const client of delta) {
        const response = await client.next();
        assert.deepEqual(
          response.resources.map((r) => r.name),
          ['c1234'],
        );
      }
      for (const client of sotw) {
        const response = await client.next();
        assert.equal(response.resources.length, COUNT, 'SotW CDS is the complete set');
        assert.equal(response.version, second.typeVersions[CLUSTER]);
      }
    }),
  );
});
