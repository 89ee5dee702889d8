import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { IR } from '../../../src/ir/types.js';
import { compile, compileWithMemo } from '../../../src/xds/compile/compile.js';
import { KeptResource } from '../../../src/xds/compile/kept.js';
import { checkConsistencyWithMemo } from '../../../src/xds/snapshot/consistency.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import { translate } from '../../../src/translate/translate.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { RESOURCE_TYPES, type ResourceType } from '../../../src/proto/type-urls.js';
import type { CompiledResource, CompiledResources } from '../../../src/proto/compiled.js';

function irOf(froms: readonly string[]): IR {
  const parsed = parseConfig({
    document: {
      insecure_server: true,
      routes: froms.map((from, i) => ({
        from,
        to: [`http://127.0.0.${i + 1}:9,3`, `http://127.0.1.${i + 1}:9,1`],
        allow_public_unauthenticated_access: true,
      })),
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir, problems } = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir, JSON.stringify(problems));
  return ir;
}

/** `resources` with every kept resource swapped for one whose message must not be read. */
function unreadable(resources: CompiledResources): { resources: CompiledResources; kept: number } {
  let kept = 0;
  const out = {} as Record<ResourceType, CompiledResource[]>;
  for (const type of RESOURCE_TYPES) {
    out[type] = (resources[type] as readonly CompiledResource[]).map((resource) => {
      if (!(resource instanceof KeptResource)) return resource;
      kept += 1;
      const { name, contentKey } = resource;
      return {
        name,
        contentKey,
        get message(): never {
          throw new Error(`the message of ${name} was read`);
        },
      } as CompiledResource;
    });
  }
  return { resources: out as unknown as CompiledResources, kept };
}

for (const [label, froms] of [
  ['per-host', ['https://a.test', 'https://b.test', 'https://c.test', 'https://d.test']],
  ['single', ['https://*.a.test', 'https://b.test', 'https://c.test', 'https://d.test']],
] as const) {
  test(`${label}: the memo keeps no message, and the next check and snapshot read none of the unchanged`, () => {
    const ir = irOf(froms);
    const first = compileWithMemo(ir);
    const checked = checkConsistencyWithMemo(first.resources);
    assert.deepEqual(checked.problems, []);
    const snapshot = buildSnapshot(first.resources);
    // Unchanged IR: the same messages, made again from the kept form on read.
    const again = compileWithMemo(ir, first.memo);
    const fresh = compile(ir);
    for (const type of RESOURCE_TYPES)
      assert.deepEqual(
        again.resources[type].map(({ name, message }) => ({ name, message })),
        fresh[type].map(({ name, message }) => ({ name, message })),
        type,
      );
    for (const next of [ir, { ...ir, virtualHosts: ir.virtualHosts.slice(0, -1) }]) {
      const compiled = compileWithMemo(next, first.memo);
      const { resources, kept } = unreadable(compiled.resources);
      assert.ok(kept >= next.clusters.length, `${kept} kept resources`);
      const check = checkConsistencyWithMemo(resources, checked.memo);
      assert.deepEqual(check.problems, []);
      const built = buildSnapshot(resources, snapshot.cache);
      assert.equal(built.snapshot.version, buildSnapshot(compile(next)).snapshot.version);
    }
  });
}
