// The consistency check stops a snapshot Envoy could not use: a missing ClusterLoadAssignment, a
// route to an unknown cluster, a scope or listener naming an unknown route configuration, two
// resources of a type under one name. Checked against a plain oracle over seeded random snapshots
// (resources kept, changed, added, removed, references broken and mended), and on compile's output.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seededRandom } from '../../support/seeded-random.js';
import { RESOURCE_TYPES, type ResourceType } from '../../../src/proto/type-urls.js';
import type { CompiledResources } from '../../../src/proto/compiled.js';
import type { ProtoObject } from '../../../src/proto/codec.js';
import {
  checkConsistency,
  checkConsistencyWithMemo,
  type ConsistencyMemo,
} from '../../../src/xds/snapshot/consistency.js';

const CDS = 'envoy.config.cluster.v3.Cluster';
const EDS = 'envoy.config.endpoint.v3.ClusterLoadAssignment';
const LDS = 'envoy.config.listener.v3.Listener';
const RDS = 'envoy.config.route.v3.RouteConfiguration';
const SRDS = 'envoy.config.route.v3.ScopedRouteConfiguration';

/**
 * A resource of any type with a loosely typed message: the oracle and the random snapshots build
 * only the fields the check reads (a listener's connection manager without its `@type`).
 */
interface CompiledResource {
  readonly name: string;
  readonly message: ProtoObject;
}

/** The rules written out one by one, as an oracle. */
function referenceProblems(
  compiled: Record<string, CompiledResource[]>,
): { path: string; message: string }[] {
  const names = (type: string): Set<string> =>
    new Set((compiled[type] ?? []).map((resource) => resource.name));
  const clusters = names(CDS);
  const endpoints = names(EDS);
  const tables = names(RDS);
  const problems: { path: string; message: string }[] = [];
  for (const { name, message } of compiled[CDS] ?? [])
    if (message.type === 'EDS' && !endpoints.has(name))
      problems.push({ path: `clusters.${name}`, message: 'EDS cluster has no ClusterLoadAssignment' });
  for (const { message } of compiled[RDS] ?? [])
    for (const vhost of (message.virtual_hosts ?? []) as {
      name: string;
      routes: { route?: { cluster?: string } }[];
    }[])
      for (const route of vhost.routes) {
        const cluster = route.route?.cluster;
        if (cluster !== undefined && !clusters.has(cluster))
          problems.push({
            path: `routes.${vhost.name}`,
            message: `route points at unknown cluster ${cluster}`,
          });
      }
  for (const scope of compiled[SRDS] ?? []) {
    const target = scope.message.route_configuration_name as string | undefined;
    if (target === undefined || !tables.has(target))
      problems.push({
        path: `scopes.${scope.name}`,
        message: `scope references unknown route configuration ${target ?? '(none)'}`,
      });
  }
  for (const { name, message } of compiled[LDS] ?? []) {
    const hcm = (
      message.filter_chains as { filters: { typed_config: { rds?: { route_config_name: string } } }[] }[]
    )[0]?.filters[0]?.typed_config;
    const rds = hcm?.rds?.route_config_name;
    if (rds !== undefined && !tables.has(rds))
      problems.push({
        path: `listeners.${name}`,
        message: `listener references unknown route configuration ${rds}`,
      });
  }
  return problems;
}

/** A listener whose connection manager fetches RDS `routeConfig`. */
function listener(routeConfig: string): CompiledResource {
  return {
    name: 'l',
    message: {
      name: 'l',
      filter_chains: [
        { filters: [{ name: 'hcm', typed_config: { rds: { route_config_name: routeConfig } } }] },
      ],
    },
  };
}

test('the check agrees with the rules written out, over 600 random snapshots, with and without the last check', (t) => {
  const next = seededRandom(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const clusterNames = Array.from({ length: 8 }, (_, i) => `c${i}`);
  const routeNames = Array.from({ length: 6 }, (_, i) => `r${i}`);
  const lists: Record<string, CompiledResource[]> = {};
  // References mostly go to names that exist now, sometimes to any name (a broken reference).
  const present = (type: string, all: readonly string[]): string =>
    next() < 0.97 && (lists[type]?.length ?? 0) > 0 ? pick(lists[type]!).name : pick(all);
  const makers: Record<string, (name: string) => CompiledResource> = {
    [CDS]: (name) => ({ name, message: { name, type: next() < 0.5 ? 'EDS' : 'STATIC' } }),
    [EDS]: (name) => ({ name, message: { cluster_name: name } }),
    [RDS]: (name) => ({
      name,
      message: {
        name,
        virtual_hosts: [
          { name: `${name}-vh`, routes: [{ route: { cluster: present(CDS, clusterNames) } }, { match: {} }] },
        ],
      },
    }),
    [SRDS]: (name) => ({
      name,
      message: next() < 0.01 ? { name } : { name, route_configuration_name: present(RDS, routeNames) },
    }),
  };
  const universe: Record<string, readonly string[]> = {
    [CDS]: clusterNames,
    [EDS]: clusterNames,
    [RDS]: routeNames,
    [SRDS]: Array.from({ length: 6 }, (_, i) => `s${i}`),
  };
  for (const type of [CDS, EDS, RDS, SRDS]) lists[type] = universe[type]!.map((name) => makers[type]!(name));
  let failures = 0;
  let memo: ConsistencyMemo | undefined;
  for (let step = 0; step < 600; step++) {
    for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
      const type = pick(Object.keys(makers));
      const list = lists[type]!;
      const name = pick(universe[type]!);
      const at = list.findIndex((resource) => resource.name === name);
      const roll = next();
      if (at >= 0 && roll < 0.85) list[at] = makers[type]!(name);
      else if (at >= 0 && roll < 0.9) list.splice(at, 1);
      else if (at < 0) list.push(makers[type]!(name));
      list.sort((a, b) => (a.name < b.name ? -1 : 1));
    }
    const compiled = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as Record<
      ResourceType,
      CompiledResource[]
    >;
    for (const type of Object.keys(makers)) compiled[type as ResourceType] = [...lists[type]!];
    compiled[LDS as ResourceType] = [listener(present(RDS, routeNames))];
    const problems = checkConsistency(compiled as unknown as CompiledResources);
    assert.deepEqual(problems, referenceProblems(compiled), `step ${step}`);
    // From the previous step's check, reading only the resources replaced since: the same problems.
    const checked = checkConsistencyWithMemo(compiled as unknown as CompiledResources, memo);
    assert.deepEqual(checked.problems, problems, `step ${step}, from the previous check`);
    memo = checked.memo;
    if (problems.length > 0) failures++;
  }
  assert.ok(failures > 30 && failures < 400, `both outcomes exercised (${failures} failing steps)`);
  t.diagnostic(`${failures} failing steps`);
});

test('two resources of one type under one name are reported', () => {
  const compiled = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as Record<
    ResourceType,
    CompiledResource[]
  >;
  compiled[CDS as ResourceType] = [
    { name: 'c', message: { name: 'c', type: 'STATIC' } },
    { name: 'c', message: { name: 'c', type: 'STATIC' } },
  ];
  assert.deepEqual(checkConsistency(compiled as unknown as CompiledResources), [
    { path: 'clusters.c', message: 'two clusters named c' },
  ]);
});
