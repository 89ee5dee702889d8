// Clusters are named by route id (a hash), and hosts sort by name in no relation to where a config
// lists them, so their sorted lists are in no memory order: translate says where each route's
// cluster and each host sits in them, compile makes its records and an encode order from that, and
// the snapshot encodes in that order. None of it may change a byte of output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { Translator } from '../../../src/translate/translate.js';
import type { IR } from '../../../src/ir/types.js';
import { compile, compileBuild } from '../../../src/xds/compile/compile.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../../../src/xds/codec/type-urls.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import type { Snapshot } from '../../../src/xds/snapshot/types.js';
import { isSortedByName, isSortedImmutableList } from '../../../src/xds/snapshot/sorted-by-name.js';
import { messageOf } from '../../../src/xds/compile/lazy-resource.js';
import { resourceBytes, resourceVersion } from '../../../src/xds/snapshot/snapshot-entry.js';

const INTERNAL = {
  authorize: { host: '127.0.0.1', port: 5443 },
  authorizeTimeoutMs: 1000,
  jwksJson: '{"keys":[]}',
};

/**
 * 120 routes: hosts in no sorted order (every fifth route on the host of the route five before
 * it, on another path), every seventh route's upstream a hostname (a STRICT_DNS cluster, which
 * has no endpoints resource), and an unserved TCP route in the middle. `wildcard` adds a route
 * whose host only the catch-all virtual host can match.
 */
function routes(wildcard = false): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let index = 0; index < 120; index++) {
    const hostIndex = index % 5 === 4 ? index - 4 : index;
    const host = `h${((hostIndex * 7919) % 1009).toString(36)}-${hostIndex}.test`;
    const upstream =
      index % 7 === 3 ? `http://upstream-${index}.internal:8080` : `http://10.0.${index}.1:8080`;
    out.push({
      from: `https://${host}`,
      ...(hostIndex === index ? {} : { prefix: `/p${index}/` }),
      to: [`${upstream},3`, `http://10.1.${index}.2:8080,1`],
    });
    if (index === 60) out.push({ from: 'tcp+https://db.test:5432', to: 'tcp://10.0.0.9:5432' });
    if (index === 30 && wildcard) out.push({ from: 'https://a*b.test', to: 'http://10.2.0.1:8080' });
  }
  return out;
}

interface Translated {
  readonly ir: IR;
  readonly order: Int32Array;
  readonly hostOrder: Int32Array;
  readonly servedPaths: string[];
  /** Each served route's host, in config order. */
  readonly servedHosts: string[];
}

function translated(wildcard = false): Translated {
  const document = { insecure_server: true, address: ':8080', routes: routes(wildcard) };
  const config = parseConfig({ document, env: {}, readText: () => '' }).config;
  assert.ok(config, 'the config parses');
  const served = config.routes.filter((route) => route.kind !== 'tcp');
  const { ir, problems, clusterBuildOrder, hostBuildOrder } = new Translator().translate(
    { ...config, routes: served },
    { systemCaFile: '/ca.pem', internal: INTERNAL },
  );
  assert.ok(ir, JSON.stringify(problems));
  assert.ok(clusterBuildOrder, 'a full translation says where each cluster sits');
  assert.ok(hostBuildOrder, 'a full translation says where each host sits');
  return {
    ir,
    order: clusterBuildOrder,
    hostOrder: hostBuildOrder,
    servedPaths: served.map((route) => route.source_path),
    servedHosts: served.map((route) => route.from_host),
  };
}

function assertPermutation(order: Int32Array, length: number, what: string): void {
  assert.equal(order.length, length, `${what}: one place per item`);
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    Array.from({ length }, (_, index) => index),
    `${what}: every place once`,
  );
}

test("translate's cluster build order says where each route's cluster sits in the sorted list", () => {
  const { ir, order, servedPaths } = translated();
  assertPermutation(order, ir.clusters.length, 'clusterBuildOrder');
  const clusterOfPath = new Map(
    ir.virtualHosts.flatMap((vhost) => vhost.routes).map((route) => [route.sourcePath, route.clusterName]),
  );
  servedPaths.forEach((path, index) => {
    assert.equal(ir.clusters[order[index] as number]?.name, clusterOfPath.get(path), path);
  });
  assert.ok(
    order.some((place, index) => place !== index),
    'the sorted list is not in route order (else this test shows nothing)',
  );
});

test("translate's host build order says where each host sits in the sorted list, the catch-all too", () => {
  for (const wildcard of [false, true]) {
    const { ir, hostOrder, servedHosts } = translated(wildcard);
    assertPermutation(hostOrder, ir.virtualHosts.length, `hostBuildOrder (wildcard: ${wildcard})`);
    // The k-th distinct host in config order; the catch-all is named by its placement.
    const made = [...new Set(servedHosts.map((host) => (host.includes('*') ? '*' : host)))];
    assert.equal(made.length, ir.virtualHosts.length);
    made.forEach((host, k) => {
      const vhost = ir.virtualHosts[hostOrder[k] as number];
      assert.ok(vhost, host);
      assert.deepEqual(vhost.domains, [host], `host made ${k}`);
    });
    assert.ok(
      hostOrder.some((place, index) => place !== index),
      'the sorted list is not in config order (else this test shows nothing)',
    );
  }
});

test('compile in memory order gives the same resources, and an encode order in route order', () => {
  const { ir, order, hostOrder, servedHosts } = translated();
  const plain = compile(ir, { reuse: false });
  const { resources, encodeOrder } = compileBuild(ir, { reuse: false, clusterOrder: order, hostOrder });
  for (const type of RESOURCE_TYPES) {
    assert.deepEqual(
      resources[type].map((resource) => resource.name),
      plain[type].map((resource) => resource.name),
      `${type}: same names, same order`,
    );
    resources[type].forEach((resource, index) => {
      const twin = plain[type][index];
      assert.ok(twin, `${type} ${resource.name}`);
      assert.deepEqual(messageOf(type, resource), messageOf(type, twin), `${type} ${resource.name}`);
    });
  }
  const clusters = resources[CLUSTER_TYPE];
  const endpoints = resources[CLUSTER_LOAD_ASSIGNMENT_TYPE];
  const clusterOrder = encodeOrder[CLUSTER_TYPE];
  const endpointsOrder = encodeOrder[CLUSTER_LOAD_ASSIGNMENT_TYPE];
  assert.ok(clusterOrder && endpointsOrder, 'an order for clusters and endpoints');
  assertPermutation(clusterOrder, clusters.length, 'cluster encode order');
  assertPermutation(endpointsOrder, endpoints.length, 'endpoints encode order');
  assert.ok(endpoints.length < clusters.length - 1, 'some clusters have no endpoints resource');
  // Route order: the authorize cluster first, then route i's cluster, as translate made them.
  const inRouteOrder = [clusters[0]?.name, ...[...order].map((place) => ir.clusters[place]?.name)];
  assert.deepEqual(
    [...clusterOrder].map((at) => clusters[at]?.name),
    inRouteOrder,
  );
  assert.deepEqual(
    [...endpointsOrder].map((at) => endpoints[at]?.name),
    inRouteOrder.filter((name) => endpoints.some((resource) => resource.name === name)),
  );
  // Host tables and scopes (one record per host under per-host delivery): in the order the hosts
  // were first named by a route.
  const hostsInConfigOrder = [...new Set(servedHosts)];
  for (const type of [ROUTE_CONFIGURATION_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE] as const) {
    const hostTypeOrder = encodeOrder[type];
    assert.ok(hostTypeOrder, `an order for ${type}`);
    assertPermutation(hostTypeOrder, resources[type].length, `${type} encode order`);
    assert.deepEqual(
      [...hostTypeOrder].map((at) => resources[type][at]?.name),
      hostsInConfigOrder.map((host) => `ingress/${host}`),
      type,
    );
  }
  assert.deepEqual(
    compileBuild(ir, { reuse: true, clusterOrder: order }).encodeOrder[CLUSTER_TYPE]?.length,
    clusters.length,
  );
  assert.deepEqual(compileBuild(ir, { reuse: false }).encodeOrder, {}, 'no memory order, no encode order');
});

test('single delivery (a catch-all host) gets no host encode order, and the same resources', () => {
  const { ir, order, hostOrder } = translated(true);
  const plain = compile(ir, { reuse: false });
  const { resources, encodeOrder } = compileBuild(ir, { reuse: false, clusterOrder: order, hostOrder });
  assert.equal(resources[SCOPED_ROUTE_CONFIGURATION_TYPE].length, 0, 'single delivery: no scopes');
  assert.equal(encodeOrder[ROUTE_CONFIGURATION_TYPE], undefined);
  assert.equal(encodeOrder[SCOPED_ROUTE_CONFIGURATION_TYPE], undefined);
  const table = resources[ROUTE_CONFIGURATION_TYPE][0];
  const plainTable = plain[ROUTE_CONFIGURATION_TYPE][0];
  assert.ok(table && plainTable);
  assert.deepEqual(
    messageOf(ROUTE_CONFIGURATION_TYPE, table),
    messageOf(ROUTE_CONFIGURATION_TYPE, plainTable),
  );
});

function assertSameSnapshot(actual: Snapshot, expected: Snapshot, what: string): void {
  assert.equal(actual.version, expected.version, `${what}: snapshot version`);
  assert.deepEqual(actual.typeVersions, expected.typeVersions, `${what}: type versions`);
  for (const type of RESOURCE_TYPES) {
    assert.deepEqual(
      [...actual.resources[type].keys()],
      [...expected.resources[type].keys()],
      `${what}: ${type}`,
    );
    for (const [name, entry] of expected.resources[type]) {
      const now = actual.resources[type].get(name);
      assert.ok(now, `${what}: ${type} ${name}`);
      assert.equal(resourceVersion(now), resourceVersion(entry), `${what}: ${type} ${name} version`);
      assert.ok(
        Buffer.from(resourceBytes(now)).equals(Buffer.from(resourceBytes(entry))),
        `${what}: ${type} ${name} bytes`,
      );
    }
  }
}

test('the snapshot is the same whatever order it encodes in', () => {
  const { ir, order, hostOrder } = translated();
  const expected = buildSnapshot(compile(ir, { reuse: false }), { reuse: false });
  const { resources, encodeOrder } = compileBuild(ir, { reuse: false, clusterOrder: order, hostOrder });
  assertSameSnapshot(buildSnapshot(resources, { reuse: false, encodeOrder }), expected, 'memory order');

  // Any permutation, for every type; a seeded shuffle.
  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
  const shuffled = Object.fromEntries(
    RESOURCE_TYPES.map((type) => {
      const places = Int32Array.from(compile(ir, { reuse: false })[type].map((_, index) => index));
      for (let i = places.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [places[i], places[j]] = [places[j] as number, places[i] as number];
      }
      return [type, places];
    }),
  );
  const fresh = compile(ir, { reuse: false });
  assertSameSnapshot(buildSnapshot(fresh, { reuse: false, encodeOrder: shuffled }), expected, 'shuffled');

  // A rebuild over the last one, in order: every entry reused, the same versions.
  const again = buildSnapshot(fresh, { encodeOrder: shuffled });
  assertSameSnapshot(again, expected, 'rebuild');
  // An order that does not fit its list is not used.
  const misfit = { [CLUSTER_TYPE]: new Int32Array([0]) };
  assertSameSnapshot(
    buildSnapshot(compile(ir, { reuse: false }), { reuse: false, encodeOrder: misfit }),
    expected,
    'misfit',
  );
});

test('isSortedImmutableList answers as isSortedByName and remembers only sorted lists', () => {
  const sorted = [{ name: 'a' }, { name: 'b' }, { name: 'c' }];
  const unsorted = [{ name: 'b' }, { name: 'a' }];
  assert.equal(isSortedImmutableList(sorted), true);
  assert.equal(isSortedImmutableList(sorted), true, 'remembered');
  assert.equal(isSortedImmutableList(unsorted), false);
  // An unsorted list is walked again each time: made sorted in place (which compile's lists never
  // are), it is then found sorted.
  unsorted.reverse();
  assert.equal(isSortedImmutableList(unsorted), isSortedByName(unsorted));
  assert.equal(isSortedImmutableList([]), true);
  assert.equal(isSortedImmutableList([{ name: 'a' }, { name: 'a' }]), false, 'duplicates are not sorted');
});
