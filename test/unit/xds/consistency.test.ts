// The incremental consistency check must answer exactly as the full one, whatever a reload changes:
// a seeded random walk over small compiled snapshots (resources kept, changed, added, removed,
// references broken and mended, now and then a list out of order) compares them at every step.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seededRandom } from '../../support/seeded-random.js';
import { RESOURCE_TYPES, type ResourceType } from '../../../src/xds/codec/type-urls.js';
import type { EagerResource, CompiledResources } from '../../../src/xds/compile/compile.js';
import { checkConsistency, IncrementalConsistencyCheck } from '../../../src/xds/snapshot/consistency.js';

const CDS = 'envoy.config.cluster.v3.Cluster';
const EDS = 'envoy.config.endpoint.v3.ClusterLoadAssignment';
const LDS = 'envoy.config.listener.v3.Listener';
const RDS = 'envoy.config.route.v3.RouteConfiguration';
const SRDS = 'envoy.config.route.v3.ScopedRouteConfiguration';

/**
 * The full check written the plain way (a name set per type, every reference looked up), as an
 * oracle for `checkConsistency`, which avoids the sets when the lists are sorted.
 */
function referenceProblems(compiled: Record<string, EagerResource[]>): { path: string; message: string }[] {
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
    const rds = (message.rds as { route_config_name?: string } | undefined)?.route_config_name;
    if (rds !== undefined && !tables.has(rds))
      problems.push({
        path: `listeners.${name}`,
        message: `listener references unknown route configuration ${rds}`,
      });
  }
  return problems;
}

test('the incremental check agrees with the full check over 600 random reloads', (t) => {
  const next = seededRandom(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const clusterNames = Array.from({ length: 8 }, (_, i) => `c${i}`);
  const routeNames = Array.from({ length: 6 }, (_, i) => `r${i}`);
  const lists: Record<string, EagerResource[]> = {};
  // References mostly go to names that exist now, sometimes to any name (a broken reference).
  const present = (type: string, all: readonly string[]): string =>
    next() < 0.97 && (lists[type]?.length ?? 0) > 0 ? pick(lists[type]!).name : pick(all);
  const makers: Record<string, (name: string) => EagerResource> = {
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
  const checker = new IncrementalConsistencyCheck();
  let failures = 0;
  for (let step = 0; step < 600; step++) {
    // Mutate one to three things: change a message, add or remove a resource.
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
      EagerResource[]
    >;
    for (const type of Object.keys(makers)) compiled[type as ResourceType] = [...lists[type]!];
    compiled[LDS as ResourceType] = [
      { name: 'l', message: { name: 'l', rds: { route_config_name: present(RDS, routeNames) } } },
    ];
    if (next() < 0.03) compiled[CDS as ResourceType].reverse(); // out of order: full check
    const full = checkConsistency(compiled as CompiledResources);
    assert.deepEqual(full, referenceProblems(compiled), `full check at step ${step}`);
    assert.deepEqual(checker.check(compiled as CompiledResources), full, `step ${step}`);
    if (full.length > 0) failures++;
  }
  assert.ok(failures > 30 && failures < 400, `both outcomes exercised (${failures} failing steps)`);
  assert.ok(checker.quickChecks > 100, `the quick path answered ${checker.quickChecks} times`);
  t.diagnostic(`${failures} failing steps, ${checker.quickChecks} answered from the change alone`);
});

test('a change of hundreds of resources is checked in full; the next small one is quick again', () => {
  // Per-host shape at 400 routes: cluster + endpoints + table + scope per host.
  const build = (generation: number, hosts: number): CompiledResources => {
    const names = Array.from({ length: hosts }, (_, i) => `h${String(i).padStart(4, '0')}`);
    const compiled = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as Record<
      ResourceType,
      EagerResource[]
    >;
    compiled[CDS as ResourceType] = names.map((name) => ({
      name,
      message: { name, type: 'EDS', generation },
    }));
    compiled[EDS as ResourceType] = names.map((name) => ({
      name,
      message: { cluster_name: name, generation },
    }));
    compiled[RDS as ResourceType] = names.map((name) => ({
      name,
      message: { name, virtual_hosts: [{ name, routes: [{ route: { cluster: name } }] }] },
    }));
    compiled[SRDS as ResourceType] = names.map((name) => ({
      name,
      message: { name, route_configuration_name: name },
    }));
    return compiled as CompiledResources;
  };
  const checker = new IncrementalConsistencyCheck();
  assert.deepEqual(checker.check(build(0, 400)), []);
  // Every cluster and endpoint message is new (a cold rebuild): the full path answers.
  const rebuilt = build(1, 400);
  assert.deepEqual(checker.check(rebuilt), []);
  assert.equal(checker.quickChecks, 0, 'a 400-resource change must not take the quick path');
  // One cluster changed: quick, from the state the full check rebuilt.
  const oneChanged = { ...rebuilt } as Record<ResourceType, EagerResource[]>;
  oneChanged[CDS as ResourceType] = [...rebuilt[CDS as ResourceType]] as EagerResource[];
  oneChanged[CDS as ResourceType][7] = {
    name: 'h0007',
    message: { name: 'h0007', type: 'EDS', generation: 2 },
  };
  assert.deepEqual(checker.check(oneChanged as CompiledResources), []);
  assert.equal(checker.quickChecks, 1);
  // A large change that breaks a reference is still reported, exactly as the full check does.
  const broken = build(3, 400) as Record<ResourceType, EagerResource[]>;
  broken[EDS as ResourceType] = broken[EDS as ResourceType].slice(1);
  const full = checkConsistency(broken as CompiledResources);
  assert.equal(full.length, 1);
  assert.deepEqual(checker.check(broken as CompiledResources), full);
});
