// Authorization state across reloads: built from the previous build's changed virtual hosts, it must
// hold exactly what a build from scratch holds; the holder keeps the routes a config dropped
// reachable for one generation (Envoy may still route by the older config).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildAuthzState, type BuiltAuthzState } from '../../../src/authorize/authz-state.js';
import { AuthzStateHolder } from '../../../src/authorize/authz-state-holder.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { IR } from '../../../src/ir/types.js';
import { OverlayMap } from '../../../src/shared/overlay-map.js';
import { Translator } from '../../../src/translate/translate.js';
import { seededRandom } from '../../support/seeded-random.js';

function irOf(translator: Translator, routes: readonly unknown[]): IR {
  const parsed = parseConfig({
    document: { insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir } = translator.translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir);
  return ir;
}

test('state built from the previous build equals a build from scratch over 200 random edits', () => {
  const next = seededRandom(77);
  const hosts = ['a.test', 'b.test', 'c.test', '*.w.test', 'x.w.test'];
  let serial = 0;
  const route = (): Record<string, unknown> => {
    serial += 1;
    return {
      from: `https://${hosts[Math.floor(next() * hosts.length)]}`,
      to: `http://10.0.${serial % 250}.1:8080`,
      ...(next() < 0.3
        ? { allowed_users: [`u${serial}@example.com`] }
        : { allow_any_authenticated_user: true }),
    };
  };
  const raw = Array.from({ length: 30 }, route);
  const translator = new Translator();
  let previous: BuiltAuthzState | undefined;
  for (let step = 0; step < 200; step++) {
    raw[Math.floor(next() * raw.length)] = route();
    const ir = irOf(translator, raw);
    const incremental = buildAuthzState(ir, previous);
    const full = buildAuthzState(ir);
    assert.deepEqual([...incremental.routes.keys()].sort(), [...full.routes.keys()].sort(), `ids at ${step}`);
    for (const [id, compiled] of full.routes)
      assert.equal(incremental.routes.get(id), compiled, `${id} at ${step}`);
    previous = { ir, state: incremental };
  }
});

test('a change of hundreds of hosts builds the same state as from scratch', () => {
  const translator = new Translator();
  const routes = (generation: number): Record<string, unknown>[] =>
    Array.from({ length: 300 }, (_, i) => ({
      from: `https://h${i}.test`,
      to: `http://10.${generation}.${i % 250}.1:8080`,
      allow_any_authenticated_user: true,
    }));
  const first = irOf(translator, routes(0));
  const previous: BuiltAuthzState = { ir: first, state: buildAuthzState(first) };
  // Every host's route changed (a new upstream): more than the incremental path takes.
  const second = irOf(translator, routes(1));
  const incremental = buildAuthzState(second, previous);
  const full = buildAuthzState(second);
  assert.equal(incremental.routes.size, 300);
  assert.deepEqual([...incremental.routes.keys()].sort(), [...full.routes.keys()].sort());
  for (const [id, compiled] of full.routes) assert.equal(incremental.routes.get(id), compiled, id);
  for (const vhost of first.virtualHosts)
    for (const route of vhost.routes) assert.equal(incremental.routes.has(route.id), false, 'old ids gone');
});

test('the holder keeps the routes a config dropped for one more config, no longer', () => {
  const translator = new Translator();
  const r = (host: string): Record<string, unknown> => ({
    from: `https://${host}`,
    to: 'http://10.0.0.1:8080',
    allow_any_authenticated_user: true,
  });
  const holder = new AuthzStateHolder();
  const idsOf = (ir: IR): string[] =>
    ir.virtualHosts.flatMap((vhost) => vhost.routes.map((route) => route.id));
  const first = irOf(translator, [r('one.test'), r('two.test')]);
  holder.install(first);
  const [one, two] = idsOf(first) as [string, string];
  const second = irOf(translator, [r('two.test'), r('three.test')]);
  holder.install(second);
  const three = idsOf(second).find((id) => id !== two) as string;
  assert.ok(holder.state().routes.get(one), 'dropped by the new config: still reachable');
  assert.ok(holder.state().routes.get(two));
  assert.ok(holder.state().routes.get(three));
  holder.install(irOf(translator, [r('three.test')]));
  assert.equal(holder.state().routes.get(one), undefined, 'two configs ago: gone');
  assert.ok(holder.state().routes.get(two), 'dropped just now: reachable');
  assert.ok(holder.state().routes.get(three));
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
