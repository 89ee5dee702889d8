// A cluster updated in place (same name, new content) has its endpoints sent again right after it,
// in both modes: Envoy warms a new instance of the cluster that waits for an EDS response (15 s
// `initial_fetch_timeout` otherwise) and holds its CDS ACK until then.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdsClient, AdsMode } from '../../../support/ads-client.js';
import type { Snapshot } from '../../../../src/xds/snapshot/types.js';
import {
  CDS,
  EDS,
  LDS,
  RDS,
  baseSpec,
  buildSnapshot,
  cluster,
  deltaConverged,
  sotwConverged,
  take,
  withServer,
} from './helpers.js';

function subscribeAll(client: AdsClient): void {
  client.subscribe(CDS);
  client.subscribe(EDS, ['c1', 'c2']);
  client.subscribe(LDS);
  client.subscribe(RDS, ['r1']);
}

function converged(client: AdsClient, snapshot: Snapshot): boolean {
  return client.mode === 'sotw' ? sotwConverged(client, snapshot) : deltaConverged(client, snapshot);
}

for (const mode of ['sotw', 'delta'] as const satisfies readonly AdsMode[]) {
  describe(`cluster updated in place (${mode})`, () => {
    it('sends its unchanged endpoints again after the CDS response, and only its', () =>
      withServer(async ({ server, connect }) => {
        const first = buildSnapshot(baseSpec());
        server.source.publish(first);
        const client = connect(mode);
        subscribeAll(client);
        await client.ackAll(() => converged(client, first));
        const spec = baseSpec();
        const updated = buildSnapshot({
          ...spec,
          clusters: [cluster('c1', { connect_timeout: { seconds: 7 } }), cluster('c2')],
        });
        server.source.publish(updated);
        const [cds, eds] = await take(client, 2);
        assert.equal(cds?.typeUrl, CDS);
        assert.equal(eds?.typeUrl, EDS);
        assert.deepEqual(
          eds?.resources.map((resource) => resource.name),
          ['c1'],
        );
        assert.deepEqual(client.pending(), [], 'nothing else');
      }));
  });
}
