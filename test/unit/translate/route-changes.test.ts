// Translating only the routes a reload changed must give exactly the IR a translation from scratch
// gives: a seeded random walk edits a few routes of a 40-route config in place at each step (new
// hosts, hosts that become shared or wildcard, duplicates, unserved kinds, bad upstreams) and
// compares one long-lived translator with a fresh one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { Config } from '../../../src/config/types.js';
import { Translator } from '../../../src/translate/translate.js';
import { seededRandom } from '../../support/seeded-random.js';

const OPTIONS = { systemCaFile: '/ca.pem' };

test('a translator fed a few changed routes at a time agrees with a fresh one, step by step', (t) => {
  const next = seededRandom(4242);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const hosts = ['a.test', 'b.test', 'c.test', 'd.test', '*.w.test', 'x.w.test', 'e.test'];
  let serial = 0;
  const rawRoute = (): Record<string, unknown> => {
    serial += 1;
    const roll = next();
    if (roll < 0.01) return { from: 'tcp+https://db.test:5432', to: 'tcp://10.0.0.9:5432' }; // unserved
    const route: Record<string, unknown> = {
      from: `https://${pick(hosts)}`,
      // Now and then the same upstream as another route: with the same host and matcher, a duplicate.
      to: roll < 0.08 ? 'http://10.0.0.1:8080' : `http://10.0.${serial % 250}.${1 + (serial % 200)}:8080`,
    };
    if (next() < 0.5) route.prefix = `/p${serial % 3}`;
    if (next() < 0.1) route.allow_public_unauthenticated_access = true;
    return route;
  };
  const raw = Array.from({ length: 40 }, rawRoute);
  const parse = (): Config | undefined =>
    parseConfig({
      document: { insecure_server: true, address: ':8080', routes: raw },
      env: {},
      readText: () => '',
    }).config;
  const kept = new Translator();
  let agreed = 0;
  let failed = 0;
  for (let step = 0; step < 300; step++) {
    for (let k = 1 + Math.floor(next() * 3); k > 0; k--) raw[Math.floor(next() * raw.length)] = rawRoute();
    const config = parse();
    if (config === undefined) continue;
    const incremental = kept.translate(config, OPTIONS);
    const fresh = new Translator().translate(config, OPTIONS);
    assert.deepEqual(incremental.problems, fresh.problems, `problems at step ${step}`);
    assert.equal(JSON.stringify(incremental.ir), JSON.stringify(fresh.ir), `IR at step ${step}`);
    if (fresh.ir === undefined) failed++;
    else agreed++;
  }
  t.diagnostic(`${agreed} steps translated (${kept.fromChanges} from the changes alone), ${failed} rejected`);
  assert.ok(agreed > 100 && failed > 10, 'both outcomes exercised');
  assert.ok(kept.fromChanges > 50, 'the incremental way was taken');
});
