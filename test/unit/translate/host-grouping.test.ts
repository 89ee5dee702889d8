// Grouping routes into virtual hosts: the cold path (one radix sort of the names) and the reload
// path (a table, sorted from the last order) must give the same hosts, sorted by name with the
// catch-all last, each with its routes in config order, made in config order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupHosts } from '../../../src/translate/host-grouping.js';
import { CATCH_ALL_VHOST } from '../../../src/translate/hosts.js';
import type { TranslatedRoute } from '../../../src/translate/route-changes.js';
import type { IRRoute, IRVirtualHost } from '../../../src/ir/types.js';
import { seededRandom } from '../../support/seeded-random.js';

/** Routes over `hostCount` hosts (some shared, some catch-all), in a random config order. */
function routes(seed: number, count: number, hostCount: number): TranslatedRoute[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, (_, index) => {
    const pick = Math.floor(random() * hostCount);
    const vhost = pick === 0 ? CATCH_ALL_VHOST : `h${(pick * 7919) % 10_007}.example.com`;
    return {
      vhost,
      domains: [vhost === CATCH_ALL_VHOST ? '*' : vhost],
      route: { name: `route-${index}` } as unknown as IRRoute,
    } as unknown as TranslatedRoute;
  });
}

/** What grouping must give, built the plain way. */
function expected(list: readonly TranslatedRoute[]): { names: string[]; routes: string[][]; made: string[] } {
  const made: string[] = [];
  const byName = new Map<string, string[]>();
  for (const route of list) {
    if (!byName.has(route.vhost)) {
      made.push(route.vhost);
      byName.set(route.vhost, []);
    }
    byName.get(route.vhost)?.push(route.route.name);
  }
  const names = [...byName.keys()].filter((name) => name !== CATCH_ALL_VHOST).sort();
  if (byName.has(CATCH_ALL_VHOST)) names.push(CATCH_ALL_VHOST);
  return { names, routes: names.map((name) => byName.get(name) ?? []), made };
}

function described(hosts: readonly IRVirtualHost[]): { names: string[]; routes: string[][] } {
  return {
    names: hosts.map((host) => host.name),
    routes: hosts.map((host) => host.routes.map((r) => r.name)),
  };
}

test('cold and reload grouping agree with the plain grouping, catch-all last, routes in config order', () => {
  for (const [seed, count, hostCount] of [
    [1, 3000, 3000],
    [2, 3000, 300],
    [3, 500, 5],
    [4, 40, 40],
    [5, 1, 1],
  ] as const) {
    const list = routes(seed, count, hostCount);
    const want = expected(list);
    for (const fresh of [true, false]) {
      const { virtualHosts, hostBuildOrder } = groupHosts(list, fresh);
      const got = described(virtualHosts);
      assert.deepEqual(got.names, want.names, `seed ${seed} fresh ${fresh}: host order`);
      assert.deepEqual(got.routes, want.routes, `seed ${seed} fresh ${fresh}: routes per host`);
      assert.deepEqual(
        Array.from(hostBuildOrder, (place) => virtualHosts[place]?.name),
        want.made,
        `seed ${seed} fresh ${fresh}: the k-th host made`,
      );
    }
  }
  const empty = groupHosts([], true);
  assert.deepEqual([empty.virtualHosts.length, empty.hostBuildOrder.length], [0, 0]);
});

test('a reload after a cold grouping sorts from the order the cold one remembered', () => {
  const cold = routes(6, 2000, 2000);
  groupHosts(cold, true);
  // Same hosts plus a few new ones: the incremental sort must still give the full order.
  const reload = [...cold, ...routes(7, 30, 2000).map((route, i) => ({ ...route, vhost: `new${i}.test` }))];
  assert.deepEqual(described(groupHosts(reload, false).virtualHosts).names, expected(reload).names);
});
