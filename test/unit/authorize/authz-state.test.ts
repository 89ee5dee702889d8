// Authorization state across reloads: each build holds exactly its IR's routes, and the holder keeps
// the routes configs dropped reachable until released (Envoy may still route by the older config).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildAuthzState } from '../../../src/authorize/authz-state.js';
import { AuthzStateHolder } from '../../../src/authorize/authz-state-holder.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { IR } from '../../../src/ir/types.js';
import { OverlayMap } from '../../../src/shared/overlay-map.js';
import { translate } from '../../../src/translate/translate.js';
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
