import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdsClient } from '../../../support/ads-client.js';
import {
  CDS,
  EDS,
  LDS,
  RDS,
  baseSpec,
  buildSnapshot,
  cluster,
  deltaConverged,
  endpoints,
  listener,
  route,
  take,
  total,
  waitFor,
  withServer,
} from './helpers.js';
import type { EncodedResource } from '../../../../src/xds/snapshot/types.js';

const CLUSTER = 'envoy.config.cluster.v3.Cluster';

/** Subscribes like Envoy does over delta ADS: wildcard CDS/LDS, named EDS/RDS. */
function subscribeAll(client: AdsClient, clusters = ['c1', 'c2'], routes = ['r1']): void {
  client.subscribe(CDS);
  client.subscribe(EDS, clusters);
  client.subscribe(LDS);
  client.subscribe(RDS, routes);
}

describe('ADS delta', () => {
  it('sends nothing before a snapshot exists, then everything once one is published', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      subscribeAll(client);
      await waitFor(() => server.ads.stats().requests === 4, 'the four subscriptions');
      assert.equal(total(server.ads.stats().responsesSent), 0);

      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      const responses = await take(client, 4);
      assert.deepEqual(
        responses.map((r) => r.typeUrl),
        [CDS, EDS, LDS, RDS],
      );
      const cds = responses[0]!;
      assert.deepEqual(
        cds.resources.map((r) => [r.name, r.version]),
        [...snapshot.resources[CLUSTER].values()].map((r) => [r.name, r.version]),
      );
      assert.equal(cds.version, snapshot.typeVersions[CLUSTER]);
    }));

  it('uses strictly increasing nonces and sets system_version_info', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const snapshots = [
        buildSnapshot(baseSpec(8080)),
        buildSnapshot(baseSpec(9090)),
        buildSnapshot({ ...baseSpec(9090), routes: [route('r1', 'c2')] }),
      ];
      server.source.publish(snapshots[0]!);
      subscribeAll(client);
      for (const snapshot of snapshots) {
        server.source.publish(snapshot);
        await client.ackAll(() => deltaConverged(client, snapshot));
      }
      const nonces = client.received.map((r) => Number(r.nonce));
      nonces.forEach((nonce, i) =>
        assert.ok(i === 0 || nonce > nonces[i - 1]!, `nonce ${nonce} after ${nonces[i - 1]}`),
      );
      for (const response of client.received) assert.notEqual(response.version, '');
    }));

  it('does not resend ACKed resources', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      subscribeAll(client);
      await client.ackAll(() => deltaConverged(client, snapshot));
      await waitFor(() => total(server.ads.stats().acks) === 4, 'four ACKs');
      const sent = total(server.ads.stats().responsesSent);
      server.source.publish(buildSnapshot(baseSpec()));
      assert.equal(total(server.ads.stats().responsesSent), sent);
    }));

  it('sends only the resource that changed', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      subscribeAll(client);
      await client.ackAll(() => deltaConverged(client, first));

      const spec = baseSpec();
      const second = buildSnapshot({ ...spec, endpoints: [endpoints('c1', 8080), endpoints('c2', 6000)] });
      server.source.publish(second);
      const [response] = await take(client, 1);
      assert.equal(response?.typeUrl, EDS);
      assert.deepEqual(
        response?.resources.map((r) => r.name),
        ['c2'],
      );
      assert.deepEqual(response?.removed, []);
      client.ack(response!);
      await waitFor(() => deltaConverged(client, second), 'convergence');
      assert.equal(server.ads.stats().responsesSent.endpoints, 2);
    }));

  it('removes resources after the updates that replace them, in the order RDS, LDS, EDS, CDS', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const first = buildSnapshot({
        clusters: [cluster('c1'), cluster('c2')],
        endpoints: [endpoints('c1'), endpoints('c2')],
        listeners: [listener('l1', 'r1'), listener('l2', 'r2', 8001)],
        routes: [route('r1', 'c1'), route('r2', 'c2')],
      });
      server.source.publish(first);
      subscribeAll(client, ['c1', 'c2'], ['r1', 'r2']);
      await client.ackAll(() => deltaConverged(client, first));

      const second = buildSnapshot({
        clusters: [cluster('c1'), cluster('c3')],
        endpoints: [endpoints('c1'), endpoints('c3')],
        listeners: [listener('l1', 'r1')],
        routes: [route('r1', 'c3')],
      });
      server.source.publish(second);
      const responses = await take(client, 6);
      const summary = responses.map((r) => ({
        type: r.typeUrl,
        upserts: r.resources.map((x) => x.name),
        removed: [...r.removed],
      }));
      assert.deepEqual(summary, [
        { type: CDS, upserts: ['c3'], removed: [] },
        { type: RDS, upserts: ['r1'], removed: [] },
        { type: RDS, upserts: [], removed: ['r2'] },
        { type: LDS, upserts: [], removed: ['l2'] },
        { type: EDS, upserts: [], removed: ['c2'] },
        { type: CDS, upserts: [], removed: ['c2'] },
      ]);
    }));

  it('logs and counts a NACK and does not resend the rejected resource until it changes', () =>
    withServer(async ({ server, connect, logger }) => {
      const client = connect('delta', 'envoy-delta-nack');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      client.subscribe(CDS);
      const initial = await client.next();
      client.ack(initial);

      const bad = buildSnapshot({
        ...baseSpec(),
        clusters: [cluster('c1', { lb_policy: 'RANDOM' }), cluster('c2')],
      });
      server.source.publish(bad);
      const rejected = await client.next();
      assert.deepEqual(
        rejected.resources.map((r) => r.name),
        ['c1'],
      );
      client.nack(rejected, 'cluster c1: lb_policy not allowed here');
      await waitFor(() => server.ads.stats().nacks.clusters === 1, 'the NACK');
      const warn = logger.records.find(
        (r) => r.level === 'warn' && JSON.stringify(r).includes('lb_policy not allowed here'),
      );
      assert.ok(warn, 'NACK logged at warn with error_detail');
      assert.match(JSON.stringify(warn), /envoy-delta-nack/);
      assert.match(server.ads.stats().lastNack?.rejected ?? '', /^c1@/);

      const sent = server.ads.stats().responsesSent.clusters;
      server.source.publish(
        buildSnapshot({
          ...baseSpec(7777),
          clusters: [cluster('c1', { lb_policy: 'RANDOM' }), cluster('c2')],
        }),
      );
      client.deltaRequest({ type_url: CDS, resource_names_subscribe: [] }); // a no-op request
      await waitFor(() => server.ads.stats().requests === 4, 'the no-op request');
      assert.equal(server.ads.stats().responsesSent.clusters, sent, 'rejected version not resent');

      const fixed = buildSnapshot({
        ...baseSpec(),
        clusters: [cluster('c1', { lb_policy: 'LEAST_REQUEST' }), cluster('c2')],
      });
      server.source.publish(fixed);
      const next = await client.next();
      assert.deepEqual(
        next.resources.map((r) => [r.name, r.version]),
        [['c1', (fixed.resources[CLUSTER].get('c1') as EncodedResource).version]],
      );
    }));

  it('ignores the ACK/NACK of a stale nonce', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      client.subscribe(CDS);
      const response = await client.next();
      client.ack(response);
      await waitFor(() => server.ads.stats().acks.clusters === 1, 'the ACK');
      client.ack(response); // the same nonce again: no longer pending
      client.deltaRequest({
        type_url: CDS,
        response_nonce: '999',
        error_detail: { code: 3, message: 'bogus' },
      });
      await waitFor(() => server.ads.stats().staleRequests === 2, 'two stale requests');
      const stats = server.ads.stats();
      assert.equal(stats.acks.clusters, 1);
      assert.equal(stats.nacks.clusters, 0);
      assert.equal(stats.responsesSent.clusters, 1);
    }));

  it('brings two clients to the same resources after a snapshot change', () =>
    withServer(async ({ server, connect }) => {
      const a = connect('delta', 'envoy-a');
      const b = connect('delta', 'envoy-b');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      subscribeAll(a);
      subscribeAll(b);
      await Promise.all([a.ackAll(() => deltaConverged(a, first)), b.ackAll(() => deltaConverged(b, first))]);
      const second = buildSnapshot({ ...baseSpec(7100), listeners: [listener('l1', 'r1', 9443)] });
      server.source.publish(second);
      await Promise.all([
        a.ackAll(() => deltaConverged(a, second)),
        b.ackAll(() => deltaConverged(b, second)),
      ]);
      assert.deepEqual(a.resources, b.resources);
    }));

  it('pushes updates in the order CDS, EDS, LDS, RDS', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      client.subscribe(RDS, ['r1']);
      client.subscribe(LDS);
      client.subscribe(EDS, ['c1', 'c2']);
      client.subscribe(CDS);
      await client.ackAll(() => deltaConverged(client, first));
      server.source.publish(
        buildSnapshot({
          clusters: [cluster('c1', { lb_policy: 'RANDOM' }), cluster('c2')],
          endpoints: [endpoints('c1', 7001), endpoints('c2', 7002)],
          listeners: [listener('l1', 'r1', 8443)],
          routes: [route('r1', 'c2')],
        }),
      );
      assert.deepEqual(
        (await take(client, 4)).map((r) => r.typeUrl),
        [CDS, EDS, LDS, RDS],
      );
    }));

  it('sends subscribed EDS/RDS resources once they appear', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('delta');
      server.source.publish(buildSnapshot(baseSpec()));
      client.subscribe(EDS, ['c1', 'c3']);
      const first = await client.next();
      assert.deepEqual(
        first.resources.map((r) => r.name),
        ['c1'],
      );
      client.ack(first);
      const spec = baseSpec();
      server.source.publish(
        buildSnapshot({
          ...spec,
          clusters: [...spec.clusters, cluster('c3')],
          endpoints: [...spec.endpoints, endpoints('c3')],
        }),
      );
      const second = await client.next();
      assert.deepEqual(
        second.resources.map((r) => r.name),
        ['c3'],
      );
    }));

  it('honours initial_resource_versions on reconnect', () =>
    withServer(async ({ server, connect }) => {
      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      const c1 = snapshot.resources[CLUSTER].get('c1')!;
      const client = connect('delta');
      client.deltaRequest({
        type_url: CDS,
        initial_resource_versions: { c1: c1.version, c2: 'outdated', gone: 'v0' },
      });
      const [upserts, removals] = await take(client, 2);
      assert.deepEqual(
        upserts?.resources.map((r) => r.name),
        ['c2'],
      );
      assert.deepEqual(removals?.removed, ['gone']);
    }));

  it('splits a large change set into responses below maxMessageBytes, each with its own nonce', () =>
    withServer(
      async ({ server, connect }) => {
        const names = Array.from({ length: 40 }, (_, i) => `cluster-${String(i).padStart(2, '0')}`);
        const padding = { alt_stat_name: 'x'.repeat(150) };
        const snapshot = buildSnapshot({ clusters: names.map((name) => cluster(name, padding)) });
        server.source.publish(snapshot);
        const client = connect('delta');
        client.subscribe(CDS);
        await client.ackAll(() => deltaConverged(client, snapshot, [CLUSTER]));
        const responses = client.received;
        assert.ok(responses.length > 1, `expected several chunks, got ${responses.length}`);
        for (const response of responses)
          assert.ok(response.bytes <= 2048, `chunk of ${response.bytes} bytes`);
        assert.equal(new Set(responses.map((r) => r.nonce)).size, responses.length);
        assert.deepEqual(
          responses.flatMap((r) => r.resources.map((x) => x.name)),
          names,
        );
        await waitFor(() => server.ads.stats().acks.clusters === responses.length, 'an ACK per chunk');
      },
      { maxMessageBytes: 2048 },
    ));
});
