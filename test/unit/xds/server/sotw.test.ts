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
  endpoints,
  listener,
  route,
  sotwConverged,
  take,
  total,
  waitFor,
  withServer,
} from './helpers.js';

/** Subscribes like Envoy does over SotW ADS: wildcard CDS/LDS, named EDS/RDS. */
function subscribeAll(client: AdsClient): void {
  client.subscribe(CDS);
  client.subscribe(EDS, ['c1', 'c2']);
  client.subscribe(LDS);
  client.subscribe(RDS, ['r1']);
}

describe('ADS SotW', () => {
  it('sends nothing before a snapshot exists, then everything once one is published', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      subscribeAll(client);
      await waitFor(() => server.ads.stats().requests === 4, 'the four subscriptions');
      assert.equal(total(server.ads.stats().responsesSent), 0, 'no response before the first snapshot');
      assert.deepEqual(client.pending(), []);

      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      const responses = await take(client, 4);
      assert.deepEqual(
        responses.map((r) => r.typeUrl),
        [CDS, EDS, LDS, RDS],
      );
      assert.deepEqual(
        responses.map((r) => r.resources.map((res) => res.name)),
        [['c1', 'c2'], ['c1', 'c2'], ['l1'], ['r1']],
      );
      assert.equal(responses[0]?.version, snapshot.typeVersions['envoy.config.cluster.v3.Cluster']);
    }));

  it('uses strictly increasing nonces and puts the type version in every response', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      const snapshots = [
        buildSnapshot(baseSpec(8080)),
        buildSnapshot(baseSpec(9090)),
        buildSnapshot({
          ...baseSpec(9090),
          clusters: [cluster('c1'), cluster('c2', { lb_policy: 'RANDOM' })],
        }),
      ];
      server.source.publish(snapshots[0]!);
      subscribeAll(client);
      for (const snapshot of snapshots) {
        server.source.publish(snapshot);
        await client.ackAll(() => sotwConverged(client, snapshot));
      }
      const nonces = client.received.map((r) => Number(r.nonce));
      assert.ok(nonces.length >= 6, `expected several responses, got ${nonces.length}`);
      nonces.forEach((nonce, i) =>
        assert.ok(i === 0 || nonce > nonces[i - 1]!, `nonce ${nonce} after ${nonces[i - 1]}`),
      );
      for (const response of client.received) {
        assert.notEqual(response.version, '');
        const typeName = response.typeUrl.slice('type.googleapis.com/'.length);
        assert.ok(
          snapshots.some((s) => s.typeVersions[typeName as keyof typeof s.typeVersions] === response.version),
          `version ${response.version} of ${typeName} comes from a snapshot`,
        );
      }
    }));

  it('does not resend an ACKed version', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      const snapshot = buildSnapshot(baseSpec());
      server.source.publish(snapshot);
      subscribeAll(client);
      await client.ackAll(() => sotwConverged(client, snapshot));
      await waitFor(() => total(server.ads.stats().acks) === 4, 'four ACKs');
      const sent = total(server.ads.stats().responsesSent);

      server.source.publish(buildSnapshot(baseSpec())); // same content, new snapshot object
      client.request({
        type_url: EDS,
        resource_names: ['c1', 'c2'],
        response_nonce: client.received[1]!.nonce,
      });
      await waitFor(() => server.ads.stats().requests === 9, 'the repeated EDS request');
      assert.equal(total(server.ads.stats().responsesSent), sent, 'nothing resent');
      assert.deepEqual(client.pending(), []);
    }));

  it('logs and counts a NACK, never resends the NACKed version, and sends a later one', () =>
    withServer(async ({ server, connect, logger }) => {
      const client = connect('sotw', 'envoy-nack');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      client.subscribe(CDS);
      const rejected = await client.next();
      client.nack(rejected, 'cluster c1: connect_timeout must be positive');
      await waitFor(() => server.ads.stats().nacks.clusters === 1, 'the NACK to be counted');

      const warn = logger.records.find(
        (r) => r.level === 'warn' && JSON.stringify(r).includes('connect_timeout must be positive'),
      );
      assert.ok(warn, 'NACK logged at warn with error_detail');
      assert.match(JSON.stringify(warn), /envoy-nack/);
      const lastNack = server.ads.stats().lastNack;
      assert.equal(lastNack?.message, 'cluster c1: connect_timeout must be positive');
      assert.equal(lastNack?.rejected, rejected.version);
      assert.equal(lastNack?.nodeId, 'envoy-nack');

      // Same CDS version again (only endpoints changed): not resent.
      server.source.publish(buildSnapshot({ ...baseSpec(9999) }));
      assert.equal(server.ads.stats().responsesSent.clusters, 1);

      // A different version is sent...
      const fixed = buildSnapshot({
        ...baseSpec(),
        clusters: [cluster('c1', { lb_policy: 'RANDOM' }), cluster('c2')],
      });
      server.source.publish(fixed);
      const next = await client.next();
      assert.equal(next.typeUrl, CDS);
      assert.equal(next.version, fixed.typeVersions['envoy.config.cluster.v3.Cluster']);
      assert.notEqual(next.version, rejected.version);
      client.ack(next);
      await waitFor(() => server.ads.stats().acks.clusters === 1, 'the ACK');

      // ...and going back to the rejected version sends nothing.
      server.source.publish(first);
      assert.equal(server.ads.stats().responsesSent.clusters, 2);
    }));

  it('ignores requests with a stale nonce', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      server.source.publish(buildSnapshot(baseSpec()));
      client.subscribe(CDS);
      const older = await client.next();
      const updated = buildSnapshot({
        ...baseSpec(),
        clusters: [cluster('c1'), cluster('c2'), cluster('c3')],
      });
      server.source.publish(updated);
      const newer = await client.next();
      assert.ok(Number(newer.nonce) > Number(older.nonce));

      client.ack(older); // answers a superseded response
      client.nack(older, 'late complaint');
      await waitFor(() => server.ads.stats().staleRequests === 2, 'two stale requests');
      const stats = server.ads.stats();
      assert.equal(stats.acks.clusters, 0);
      assert.equal(stats.nacks.clusters, 0);
      assert.equal(stats.responsesSent.clusters, 2);

      client.ack(newer);
      await waitFor(() => server.ads.stats().acks.clusters === 1, 'the ACK of the latest nonce');
      assert.equal(server.ads.stats().responsesSent.clusters, 2);
    }));

  it('brings two clients to the same versions after a snapshot change', () =>
    withServer(async ({ server, connect }) => {
      const a = connect('sotw', 'envoy-a');
      const b = connect('sotw', 'envoy-b');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      subscribeAll(a);
      subscribeAll(b);
      await Promise.all([a.ackAll(() => sotwConverged(a, first)), b.ackAll(() => sotwConverged(b, first))]);

      const second = buildSnapshot({ ...baseSpec(7000), routes: [route('r1', 'c2')] });
      server.source.publish(second);
      await Promise.all([a.ackAll(() => sotwConverged(a, second)), b.ackAll(() => sotwConverged(b, second))]);
      assert.deepEqual(a.versions, b.versions);
      assert.deepEqual(a.resources, b.resources);
    }));

  it('pushes an update in the order CDS, EDS, LDS, RDS', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      const first = buildSnapshot(baseSpec());
      server.source.publish(first);
      // Subscribe in the "wrong" order: the push order must not depend on it.
      client.subscribe(RDS, ['r1']);
      client.subscribe(LDS);
      client.subscribe(EDS, ['c1', 'c2']);
      client.subscribe(CDS);
      await client.ackAll(() => sotwConverged(client, first));

      server.source.publish(
        buildSnapshot({
          clusters: [cluster('c1'), cluster('c2'), cluster('c3')],
          endpoints: [endpoints('c1', 7001), endpoints('c2', 7002), endpoints('c3', 7003)],
          listeners: [listener('l1', 'r1', 8443)],
          routes: [route('r1', 'c3')],
        }),
      );
      const order = (await take(client, 4)).map((r) => r.typeUrl);
      assert.deepEqual(order, [CDS, EDS, LDS, RDS]);
    }));

  it('remembers EDS/RDS names that do not exist yet and sends them when they appear', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      server.source.publish(buildSnapshot(baseSpec()));
      client.subscribe(EDS, ['c1', 'c3']);
      const firstEds = await client.next();
      assert.deepEqual(
        firstEds.resources.map((r) => r.name),
        ['c1'],
      );
      client.ack(firstEds);
      client.subscribe(RDS, ['r2']);
      await waitFor(() => server.ads.stats().requests === 3, 'the RDS request');
      assert.equal(server.ads.stats().responsesSent.routes, 0, 'nothing to say about a missing route');

      const grown = baseSpec();
      server.source.publish(
        buildSnapshot({
          ...grown,
          clusters: [...grown.clusters, cluster('c3')],
          endpoints: [...grown.endpoints, endpoints('c3', 8090)],
          listeners: [listener('l1', 'r1'), listener('l2', 'r2', 8001)],
          routes: [...grown.routes, route('r2', 'c3')],
        }),
      );
      const [eds, rds] = await take(client, 2);
      assert.equal(eds?.typeUrl, EDS);
      // EDS is incremental even in SotW: c1 is unchanged and already held, so only c3 is sent.
      assert.deepEqual(
        eds?.resources.map((r) => r.name),
        ['c3'],
      );
      assert.equal(rds?.typeUrl, RDS);
      assert.deepEqual(
        rds?.resources.map((r) => r.name),
        ['r2'],
      );
    }));

  it('answers a changed EDS subscription at the same version with the newly requested name', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      server.source.publish(buildSnapshot(baseSpec()));
      client.subscribe(EDS, ['c1']);
      const first = await client.next();
      client.request({
        type_url: EDS,
        version_info: first.version,
        response_nonce: first.nonce,
        resource_names: ['c1', 'c2'],
      });
      const second = await client.next();
      assert.equal(second.version, first.version);
      assert.deepEqual(
        second.resources.map((r) => r.name),
        ['c2'],
        'only the newly requested c2: the client holds c1 at this version',
      );
    }));

  it('sends only the RDS/EDS resources that changed since the client got them', () =>
    withServer(async ({ server, connect }) => {
      const client = connect('sotw');
      server.source.publish(buildSnapshot(baseSpec()));
      client.subscribe(EDS, ['c1', 'c2']);
      const first = await client.next();
      assert.deepEqual(
        first.resources.map((r) => r.name),
        ['c1', 'c2'],
      );
      client.ack(first);
      await waitFor(() => server.ads.stats().acks.endpoints === 1, 'the EDS ACK');

      const changed = buildSnapshot({
        ...baseSpec(),
        endpoints: [endpoints('c1', 8080), endpoints('c2', 9000)],
      });
      server.source.publish(changed);
      const second = await client.next();
      assert.equal(second.version, changed.typeVersions['envoy.config.endpoint.v3.ClusterLoadAssignment']);
      assert.deepEqual(
        second.resources.map((r) => r.name),
        ['c2'],
        'c1 is unchanged: omitting it keeps it (RDS/EDS are not state of the world)',
      );
    }));

  it('splits RDS under maxMessageBytes, one response per ACK, each resource once', () =>
    withServer(
      async ({ server, connect }) => {
        const names = Array.from({ length: 60 }, (_, index) => `r${index}`);
        const snapshot = buildSnapshot({ ...baseSpec(), routes: names.map((name) => route(name, 'c1')) });
        server.source.publish(snapshot);
        const client = connect('sotw');
        client.subscribe(RDS, names);
        const seen: string[] = [];
        let responses = 0;
        while (seen.length < names.length) {
          assert.ok(responses < names.length, 'every response carries at least one resource');
          const response = await client.next();
          responses += 1;
          assert.equal(response.typeUrl, RDS);
          assert.ok(response.bytes <= 1024, `response of ${response.bytes} B over the 1024 B limit`);
          assert.equal(response.version, snapshot.typeVersions['envoy.config.route.v3.RouteConfiguration']);
          assert.equal(server.ads.stats().responsesSent.routes, responses, 'the next part waits for the ACK');
          seen.push(...response.resources.map((r) => r.name));
          client.ack(response);
        }
        assert.ok(responses >= 3, `split into ${responses} responses`);
        assert.deepEqual([...seen].sort(), [...names].sort(), 'every route exactly once');
        await waitFor(() => server.ads.stats().acks.routes === responses, 'the last ACK');
        assert.equal(server.ads.stats().responsesSent.routes, responses, 'nothing more to send');
      },
      { maxMessageBytes: 1024 },
    ));
});
