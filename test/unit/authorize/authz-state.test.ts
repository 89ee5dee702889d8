// Authorization state across reloads: each build holds exactly its IR's routes, and the holder keeps
// the routes configs dropped reachable until released (Envoy may still route by the older config).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildAuthzState } from '../../../src/authorize/authz-state.js';
import { AuthzStateHolder } from '../../../src/authorize/authz-state-holder.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { IR, IRVirtualHost } from '../../../src/ir/types.js';
import { OverlayMap } from '../../../src/shared/overlay-map.js';
import { translate } from '../../../src/translate/translate.js';
import { withDecisionName } from '../../../src/translate/decision-name.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

function irOf(routes: readonly unknown[]): IR {
  const parsed = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir } = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir);
  return ir;
}

test('the state holds every route of the IR with its policy, and nothing else', () => {
  const ir = irOf([
    { from: 'https://a.test', to: 'http://10.0.0.1:8080', allowed_users: ['u@example.com'] },
    {
      from: 'https://b.test',
      prefix: '/api',
      to: 'http://10.0.0.3:8080',
      allow_any_authenticated_user: true,
    },
    // After `/api`: first, it would shadow it (translate refuses that).
    { from: 'https://b.test', to: 'http://10.0.0.2:8080', allow_public_unauthenticated_access: true },
  ]);
  const state = buildAuthzState(ir);
  const ids = ir.virtualHosts.flatMap((vhost) => vhost.routes.map((route) => route.id));
  assert.equal(ids.length, 3);
  assert.deepEqual([...state.routes.keys()].sort(), [...ids].sort());
  const publicRoutes = [...state.routes.values()].filter((route) => route.public);
  assert.equal(publicRoutes.length, 1);
});

test('buildAuthzState is pure: the same IR gives the same routes whatever was built before', () => {
  const routes = (generation: number): Record<string, unknown>[] =>
    Array.from({ length: 50 }, (_, i) => ({
      from: `https://h${i}.g${generation}.test`,
      to: `http://10.${generation}.${i % 250}.1:8080`,
      allow_any_authenticated_user: true,
    }));
  const first = irOf(routes(0));
  const second = irOf(routes(1));
  buildAuthzState(first);
  const afterFirst = buildAuthzState(second, buildAuthzState(first));
  const fresh = buildAuthzState(second);
  assert.deepEqual([...afterFirst.routes.keys()], [...fresh.routes.keys()]);
  assert.deepEqual([...afterFirst.policies.keys()], [...fresh.policies.keys()]);
  for (const vhost of first.virtualHosts)
    for (const route of vhost.routes) assert.equal(fresh.routes.has(route.id), false, 'old ids absent');
});

test('a reload reuses the compiled policy of an unchanged route and compiles a changed one', () => {
  const route = (users: string[]): Record<string, unknown> => ({
    from: 'https://a.test',
    to: 'http://10.0.0.1:8080',
    allowed_users: users,
  });
  const first = buildAuthzState(
    irOf([{ ...route(['b@example.com']), prefix: '/b' }, route(['a@example.com'])]),
  );
  const next = buildAuthzState(
    irOf([{ ...route(['c@example.com']), prefix: '/b' }, route(['a@example.com'])]),
    first,
  );
  const before = [...first.policies.values()];
  const after = [...next.policies.values()];
  assert.equal(after.length, 2);
  assert.equal(after.filter((policy) => before.includes(policy)).length, 1, 'one reused, one compiled');
});

test('the holder keeps dropped routes with their last policy until release; changed policies apply at once', () => {
  const r = (
    host: string,
    policy: Record<string, unknown> = { allow_any_authenticated_user: true },
  ): Record<string, unknown> => ({ from: `https://${host}`, to: 'http://10.0.0.1:8080', ...policy });
  const holder = new AuthzStateHolder();
  const idOf = (ir: IR, host: string): string => {
    const vhost = ir.virtualHosts.find((candidate) => candidate.domains.some((d) => d.startsWith(host)));
    const id = vhost?.routes[0]?.id;
    assert.ok(id, `a route for ${host}`);
    return id;
  };
  const first = irOf([r('one.test'), r('two.test')]);
  holder.install(first);
  const one = idOf(first, 'one.test');
  const onePolicy = holder.state().routes.get(one)?.policy;
  const second = irOf([r('two.test', { allowed_users: ['alice@example.com'] }), r('three.test')]);
  holder.install(second);
  const twoNow = idOf(second, 'two.test');
  const three = idOf(second, 'three.test');
  assert.equal(holder.state().routes.get(one)?.policy, onePolicy, 'dropped: still judged by its last policy');
  assert.ok(holder.state().routes.get(three));
  const changed = holder.state().routes.get(twoNow)?.policy;
  assert.ok(changed !== undefined && changed !== onePolicy, 'a changed policy on a kept id applies at once');
  holder.install(irOf([r('three.test')]));
  assert.ok(holder.state().routes.get(one), 'two configs ago, not released: still kept');
  assert.ok(holder.state().routes.get(twoNow), 'dropped just now: kept');
  holder.release();
  assert.equal(holder.state().routes.get(one), undefined, 'released: gone');
  assert.equal(holder.state().routes.get(twoNow), undefined);
  assert.ok(holder.state().routes.get(three));
  holder.install(irOf([r('one.test')]));
  assert.ok(holder.state().routes.get(three), 'dropped after the release: kept until the next');
});

test('OverlayMap reads the front map first and the back map for what the front lacks', () => {
  const map = new OverlayMap(
    new Map([
      ['a', 1],
      ['b', 2],
    ]),
    new Map([
      ['b', 20],
      ['c', 30],
    ]),
  );
  assert.equal(map.get('a'), 1);
  assert.equal(map.get('b'), 2, 'front wins');
  assert.equal(map.get('c'), 30);
  assert.equal(map.get('d'), undefined);
  assert.ok(map.has('c') && !map.has('d'));
  assert.equal(map.size, 3);
  assert.deepEqual(
    new Map(map),
    new Map([
      ['b', 2],
      ['c', 30],
      ['a', 1],
    ]),
  );
  assert.deepEqual([...map.keys()].sort(), ['a', 'b', 'c']);
  assert.deepEqual([...map.values()].sort(), [1, 2, 30]);
  let seen = 0;
  map.forEach((value, key, self) => {
    assert.equal(self.get(key), value);
    seen++;
  });
  assert.equal(seen, 3);
});

/** A state's content as comparable data: routes in order, each policy by its content key. */
function stateContent(state: ReturnType<typeof buildAuthzState>): unknown {
  const keyOf = new Map([...state.policies].map(([key, policy]) => [policy, key]));
  return {
    routes: [...state.routes.values()].map((route) => ({
      ...route,
      policy: keyOf.get(route.policy),
      decision:
        route.decision === undefined
          ? undefined
          : { name: route.decision.name, hostRoutes: route.decision.hostRoutes.map((r) => r.id) },
    })),
    hosts: state.hosts.map((host) => [
      host.vhost.name,
      host.routes.map((route) => route.id),
      host.policyKeys,
    ]),
    policies: [...state.policies.keys()],
    rest: { ...state, routes: undefined, hosts: undefined, policies: undefined },
  };
}

test('a state built from the previous one equals a fresh one: hosts kept, changed, added, removed, IR-wide changes', () => {
  const route = (i: number, users = [`u${i % 3}@example.com`]): Record<string, unknown> => ({
    from: `https://h${i}.test`,
    to: `http://10.0.0.${i + 1}:8080`,
    allowed_users: users,
  });
  const base = irOf(Array.from({ length: 8 }, (_, i) => route(i)));
  const first = buildAuthzState(base);
  // The pipeline hands back unchanged hosts as the same objects: keep them so here.
  const keep = (ir: IR): IR => ({
    ...ir,
    virtualHosts: ir.virtualHosts.map(
      (vhost) =>
        base.virtualHosts.find(
          (was) => was.name === vhost.name && JSON.stringify(was) === JSON.stringify(vhost),
        ) ?? vhost,
    ),
  });
  const cases: [string, IR][] = [
    [
      'one route changed',
      keep(irOf(Array.from({ length: 8 }, (_, i) => route(i, i === 3 ? ['x@example.com'] : undefined)))),
    ],
    [
      'one host added in the middle',
      keep(
        irOf([
          ...Array.from({ length: 4 }, (_, i) => route(i)),
          route(20),
          ...Array.from({ length: 4 }, (_, i) => route(i + 4)),
        ]),
      ),
    ],
    [
      'hosts removed',
      keep(irOf(Array.from({ length: 8 }, (_, i) => route(i)).filter((_, i) => i % 3 !== 1))),
    ],
    ['reordered', keep(irOf(Array.from({ length: 8 }, (_, i) => route(7 - i))))],
  ];
  for (const [name, ir] of cases) {
    const reused = ir.virtualHosts.filter((vhost) => base.virtualHosts.includes(vhost)).length;
    assert.ok(reused > 0 || name === 'reordered', `${name}: some hosts are the same objects`);
    assert.deepEqual(stateContent(buildAuthzState(ir, first)), stateContent(buildAuthzState(ir)), name);
  }
  // IR-wide: the fast path turned on, then off, every host the same object (replayable routes
  // share their host's list of routes: built again whole).
  const authorizeOn = { ...base.authorize, decisionTokenLifetimeMs: 60_000 };
  const on: IR = {
    ...base,
    authorize: authorizeOn,
    virtualHosts: base.virtualHosts.map((vhost) => ({
      ...vhost,
      routes: vhost.routes.map((route) => withDecisionName(route, vhost.name, vhost.domains, authorizeOn)),
    })),
  };
  const off: IR = { ...on, authorize: base.authorize };
  const stateOn = buildAuthzState(on, first);
  assert.ok(
    [...stateOn.routes.values()].every((entry) => entry.decision !== undefined),
    'replayable',
  );
  assert.deepEqual(stateContent(stateOn), stateContent(buildAuthzState(on)), 'fast path on');
  assert.deepEqual(stateContent(buildAuthzState(off, stateOn)), stateContent(buildAuthzState(off)), 'off');
  const changedOne: IR = { ...on, virtualHosts: on.virtualHosts.map((v, i) => (i === 2 ? { ...v } : v)) };
  assert.deepEqual(
    stateContent(buildAuthzState(changedOne, stateOn)),
    stateContent(buildAuthzState(changedOne)),
    'one host changed with the fast path on',
  );
});

test('a host handed over as the same object keeps its entries; a changed one is rebuilt', () => {
  const ir = irOf([
    { from: 'https://a.test', to: 'http://10.0.0.1:8080', allowed_users: ['a@example.com'] },
    { from: 'https://b.test', to: 'http://10.0.0.2:8080', allowed_users: ['b@example.com'] },
  ]);
  const first = buildAuthzState(ir);
  const [a, b] = ir.virtualHosts;
  assert.ok(a !== undefined && b !== undefined);
  const next = buildAuthzState({ ...ir, virtualHosts: [a, { ...b }] }, first);
  assert.equal(next.hosts[0], first.hosts[0], 'the kept host: the very same entries');
  assert.notEqual(next.hosts[1], first.hosts[1], 'the changed host: built again');
  assert.equal(
    next.hosts[1]?.routes[0]?.policy,
    first.hosts[1]?.routes[0]?.policy,
    'its policy lent by content',
  );
});

/** `stateContent` with the maps as sets (a patched state's maps iterate in another order: nothing reads it). */
function unorderedContent(state: ReturnType<typeof buildAuthzState>): unknown {
  const content = stateContent(state) as { routes: { id: string }[] };
  return {
    ...content,
    routes: [...content.routes].sort((a, b) => a.id.localeCompare(b.id)),
    policies: [...state.policies.keys()].sort(),
    uses: [...state.policyUses].sort(([a], [b]) => a.localeCompare(b)),
  };
}

test('a state patched from `changes` equals a fresh one: hosts changed, added, removed; base mismatch builds in full', () => {
  const route = (i: number, users = [`u${i % 3}@example.com`]): Record<string, unknown> => ({
    from: `https://h${i}.test`,
    to: `http://10.0.0.${i + 1}:8080`,
    allowed_users: users,
  });
  const base = irOf(Array.from({ length: 8 }, (_, i) => route(i)));
  const first = buildAuthzState(base);
  const keep = (ir: IR): IR => ({
    ...ir,
    virtualHosts: ir.virtualHosts.map(
      (vhost) =>
        base.virtualHosts.find(
          (was) => was.name === vhost.name && JSON.stringify(was) === JSON.stringify(vhost),
        ) ?? vhost,
    ),
  });
  const named = (ir: IR): Set<string> => {
    const names = new Set<string>();
    for (const vhost of ir.virtualHosts) if (!base.virtualHosts.includes(vhost)) names.add(vhost.name);
    for (const vhost of base.virtualHosts) if (!ir.virtualHosts.includes(vhost)) names.add(vhost.name);
    return names;
  };
  const cases: [string, IR][] = [
    [
      'one route changed (a policy only it had)',
      keep(irOf(Array.from({ length: 8 }, (_, i) => route(i, i === 3 ? ['x@example.com'] : undefined)))),
    ],
    [
      'one host added in the middle',
      keep(
        irOf([
          ...Array.from({ length: 4 }, (_, i) => route(i)),
          route(20, ['new@example.com']),
          ...Array.from({ length: 4 }, (_, i) => route(i + 4)),
        ]),
      ),
    ],
    [
      'hosts removed',
      keep(irOf(Array.from({ length: 8 }, (_, i) => route(i)).filter((_, i) => i % 3 !== 1))),
    ],
    [
      'the last users of a policy removed',
      keep(irOf(Array.from({ length: 8 }, (_, i) => route(i)).filter((_, i) => i % 3 !== 2))),
    ],
  ];
  for (const [name, ir] of cases) {
    const changes = { base, virtualHosts: named(ir) };
    assert.ok(changes.virtualHosts.size > 0 && changes.virtualHosts.size < 8, name);
    const patched = buildAuthzState(ir, first, changes);
    assert.deepEqual(unorderedContent(patched), unorderedContent(buildAuthzState(ir)), name);
    // Kept hosts are the previous state's very entries (patched, not rebuilt).
    const kept = patched.hosts.filter((host) => first.hosts.includes(host)).length;
    assert.equal(kept, ir.virtualHosts.filter((vhost) => base.virtualHosts.includes(vhost)).length, name);
    assert.notEqual(patched.routes, first.routes, `${name}: the previous map is copied, not changed`);
    assert.equal(first.routes.size, 8, `${name}: the previous state is untouched`);
  }
  // A base that is not the previous state's IR: changes are ignored (built in full, still exact).
  const [name, ir] = cases[0] as [string, IR];
  const stale = buildAuthzState(ir, first, { base: irOf([route(0)]), virtualHosts: new Set() });
  assert.deepEqual(stateContent(stale), stateContent(buildAuthzState(ir)), `${name}, base mismatch`);
  // A route id two hosts would share: the patch cannot be exact, the full build keeps the last one's.
  const clash = {
    ...base,
    virtualHosts: [...base.virtualHosts, { ...(base.virtualHosts[0] as IRVirtualHost), name: 'clash' }],
  };
  const clashed = buildAuthzState(clash, first, { base, virtualHosts: new Set(['clash']) });
  assert.deepEqual(stateContent(clashed), stateContent(buildAuthzState(clash)), 'shared route id');
  // The fast path turned on with one host named: every entry changes, so built in full.
  const authorizeOn = { ...base.authorize, decisionTokenLifetimeMs: 60_000 };
  const on: IR = { ...base, authorize: authorizeOn };
  const stateOn = buildAuthzState(on, first, {
    base,
    virtualHosts: new Set([base.virtualHosts[0]?.name ?? '']),
  });
  assert.deepEqual(stateContent(stateOn), stateContent(buildAuthzState(on)), 'fast path on');
});

test('the holder retires the routes of the hosts `changes` names and the new config dropped', () => {
  const ir = irOf([
    { from: 'https://a.test', to: 'http://10.0.0.1:8080', allowed_users: ['a@example.com'] },
    { from: 'https://b.test', to: 'http://10.0.0.2:8080', allowed_users: ['b@example.com'] },
  ]);
  const holder = new AuthzStateHolder();
  holder.install(ir);
  const [a, b] = ir.virtualHosts;
  assert.ok(a !== undefined && b !== undefined);
  const dropped = b.routes[0]?.id ?? '';
  const next: IR = { ...ir, virtualHosts: [a] };
  holder.install(next, { base: ir, virtualHosts: new Set([b.name]) });
  assert.equal(holder.state().routes.get(dropped)?.id, dropped, 'b kept until release');
  assert.equal(holder.state().routes.size, 2);
  holder.release();
  assert.equal(holder.state().routes.get(dropped), undefined);
  assert.equal(holder.state().routes.size, 1);
});
