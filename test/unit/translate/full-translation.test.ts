// The full translation (not the few-changes way of route-changes.ts): duplicate routes reported
// in config order naming the first, earlier translations reused when the parse hands over the same
// route objects (at their place or moved), and always the IR a fresh translator gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forgetParsedRoutes, parseConfig } from '../../../src/config/parse-config.js';
import type { Config, RouteSettings } from '../../../src/config/types.js';
import { Translator } from '../../../src/translate/translate.js';
import type { IR, IRRoute } from '../../../src/ir/types.js';

const OPTIONS = { systemCaFile: '/ca.pem' };

function parse(routes: readonly Record<string, unknown>[]): Config {
  const config = parseConfig({
    document: { insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(config, 'the config parses');
  return config;
}

/** `config` with its routes replaced (the same settings objects, as the parse cache hands them). */
function withRoutes(config: Config, routes: readonly RouteSettings[]): Config {
  return { ...config, routes };
}

function routesOf(ir: IR | undefined): IRRoute[] {
  assert.ok(ir, 'translated');
  return ir.virtualHosts.flatMap((vhost) => vhost.routes);
}

const route = (host: string, to = 'http://10.0.0.1:8080'): Record<string, unknown> => ({
  from: `https://${host}`,
  to,
});

test('duplicates are reported in config order, each naming the first route with its id', () => {
  const config = parse([
    route('a.test'),
    route('b.test'),
    route('a.test'), // duplicates routes[0]
    { from: 'tcp+https://db.test:5432', to: 'tcp://10.0.0.9:5432' }, // not served yet
    route('b.test'), // duplicates routes[1]
    route('a.test'), // duplicates routes[0] too
    route('a.test', 'http://10.0.0.2:8080'), // same host, other upstream: not a duplicate
  ]);
  const result = new Translator().translate(config, OPTIONS);
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => [problem.path, problem.message.split(' (')[0]]),
    [
      ['routes[2]', 'duplicates routes[0]'],
      ['routes[3]', 'TCP routes are valid configuration but not served by this version yet'],
      ['routes[4]', 'duplicates routes[1]'],
      ['routes[5]', 'duplicates routes[0]'],
    ],
  );
});

test('a later translation reuses the routes it already translated, moved or not, and equals a fresh one', () => {
  const base = parse(Array.from({ length: 30 }, (_, i) => route(`h${i % 7}.test`, `http://10.0.1.${i}:80`)));
  const translator = new Translator();
  let byName = new Map(routesOf(translator.translate(base, OPTIONS).ir).map((r) => [r.name, r]));
  const extra = parse([route('new.test', 'http://10.0.2.1:80')]).routes[0] as RouteSettings;
  const cases: [string, RouteSettings[]][] = [
    ['reversed', [...base.routes].reverse()],
    ['one inserted first', [extra, ...base.routes]],
    ['three removed', base.routes.filter((_, i) => i % 10 !== 4)],
    [
      'half replaced',
      [
        ...base.routes.slice(0, 15),
        ...parse(Array.from({ length: 15 }, (_, i) => route(`z${i}.test`, `http://10.0.3.${i}:80`))).routes,
      ],
    ],
  ];
  for (const [what, routes] of cases) {
    const config = withRoutes(base, routes);
    const again = translator.translate(config, OPTIONS);
    const fresh = new Translator().translate(config, OPTIONS);
    assert.deepEqual(again.problems, []);
    assert.equal(
      JSON.stringify(again.ir),
      JSON.stringify(fresh.ir),
      `${what}: the IR a fresh translator gives`,
    );
    const kept = routesOf(again.ir).filter((r) => byName.get(r.name) === r).length;
    const known = routes.filter((settings) => base.routes.includes(settings)).length;
    // A reversed list finds no route at its old place: it is translated afresh (same IR).
    assert.equal(kept, what === 'reversed' ? 0 : known, `${what}: earlier route objects reused`);
    assert.equal(again.reusedRoutes, kept, `${what}: reusedRoutes counts them`);
    // Back to the base config (its routes translated afresh after a reversal) for the next case.
    byName = new Map(routesOf(translator.translate(base, OPTIONS).ir).map((r) => [r.name, r]));
  }
});

test('a freshly parsed copy of the same config is translated afresh, with the same IR', () => {
  // More routes than the few-changes way takes (256), so the full translation runs.
  const routes = Array.from({ length: 300 }, (_, i) =>
    route(`h${i}.test`, `http://10.0.4.${i % 250}:${80 + i}`),
  );
  const translator = new Translator();
  const first = translator.translate(parse(routes), OPTIONS).ir;
  // New item objects and a forgotten cache: otherwise the parse hands over the same route objects.
  forgetParsedRoutes();
  const secondResult = translator.translate(parse(structuredClone(routes)), OPTIONS);
  assert.equal(secondResult.reusedRoutes, 0, 'nothing reused: later stages need not look');
  const second = secondResult.ir;
  assert.equal(JSON.stringify(second), JSON.stringify(first));
  const firstRoutes = new Set(routesOf(first));
  assert.ok(
    routesOf(second).every((r) => !firstRoutes.has(r)),
    'new settings objects: new IR objects',
  );
});
