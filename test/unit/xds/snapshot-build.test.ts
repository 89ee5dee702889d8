// The snapshot stage's bookkeeping: the array-backed resource map answers like a Map, and type
// versions depend only on the set of (name, version) pairs, whatever objects and order produced it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLUSTER_TYPE, RESOURCE_TYPES, type ResourceType } from '../../../src/xds/codec/type-urls.js';
import type { CompiledResource, CompiledResources } from '../../../src/xds/compile/compile.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import { isSortedByName, SortedResourceMap } from '../../../src/xds/snapshot/sorted-by-name.js';
import type { EncodedResource } from '../../../src/xds/snapshot/types.js';
import { encodeMessageReference, type ProtoObject } from '../../../src/xds/codec/codec.js';
import { seededRandom } from '../../support/seeded-random.js';
import { contentHash64 } from '../../../src/shared/fast-hash.js';
import { resourceBytes, resourceVersion } from '../../../src/xds/snapshot/snapshot-entry.js';
import { messageOf } from '../../../src/xds/compile/lazy-resource.js';

function resource(name: string): EncodedResource {
  return { name, version: `v-${name}`, bytes: new Uint8Array([name.length]) };
}

test('SortedResourceMap answers get, has, size and iteration exactly as a Map of the same items', () => {
  const names = Array.from({ length: 257 }, (_, index) => `route-${(index * 7919).toString(36)}`).sort();
  const items = names.map(resource);
  assert.ok(isSortedByName(items));
  const sorted = new SortedResourceMap(items);
  const map = new Map(items.map((item) => [item.name, item]));
  assert.equal(sorted.size, map.size);
  for (const name of [...names, 'absent', '', 'route-', 'zzz', names[0] + 'x']) {
    assert.equal(sorted.get(name), map.get(name), name);
    assert.equal(sorted.has(name), map.has(name), name);
  }
  assert.deepEqual([...sorted], [...map]);
  assert.deepEqual([...sorted.keys()], [...map.keys()]);
  assert.deepEqual([...sorted.values()], [...map.values()]);
  assert.deepEqual([...sorted.entries()], [...map.entries()]);
  const seen: string[] = [];
  sorted.forEach((value, key, self) => {
    assert.equal(value.name, key);
    assert.equal(self, sorted);
    seen.push(key);
  });
  assert.deepEqual(seen, names);
  assert.equal(new SortedResourceMap([]).get('a'), undefined);
});

test('isSortedByName wants strictly increasing names', () => {
  assert.ok(isSortedByName([]));
  assert.ok(isSortedByName([{ name: 'a' }]));
  assert.ok(isSortedByName([{ name: 'a' }, { name: 'b' }]));
  assert.ok(!isSortedByName([{ name: 'b' }, { name: 'a' }]));
  assert.ok(!isSortedByName([{ name: 'a' }, { name: 'a' }]), 'duplicates are not sorted');
});

/** Compiled resources with the given clusters (fresh message objects each call) and nothing else. */
function compiledClusters(names: readonly string[], timeoutSeconds = 1): CompiledResources {
  const empty = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as Record<
    ResourceType,
    CompiledResource[]
  >;
  empty[CLUSTER_TYPE] = names.map((name) => ({
    name,
    message: { name, type: 'STATIC', connect_timeout: { seconds: timeoutSeconds, nanos: 0 } },
  }));
  return empty;
}

test('a type version depends only on its (name, version) pairs: same content, same version', () => {
  const first = buildSnapshot(compiledClusters(['a', 'b', 'c']));
  const again = buildSnapshot(compiledClusters(['a', 'b', 'c'])); // new objects, same content
  assert.equal(again.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  assert.equal(again.version, first.version);

  const unsorted = buildSnapshot(compiledClusters(['c', 'a', 'b']));
  assert.equal(
    unsorted.typeVersions[CLUSTER_TYPE],
    first.typeVersions[CLUSTER_TYPE],
    'order does not matter',
  );
  assert.equal(
    resourceVersion(unsorted.resources[CLUSTER_TYPE].get('a') as EncodedResource),
    resourceVersion(first.resources[CLUSTER_TYPE].get('a') as EncodedResource),
  );
  assert.deepEqual(
    [...unsorted.resources[CLUSTER_TYPE].keys()],
    ['c', 'a', 'b'],
    'an unsorted list keeps its order',
  );

  const changed = buildSnapshot(compiledClusters(['a', 'b', 'c'], 2));
  assert.notEqual(changed.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  const fewer = buildSnapshot(compiledClusters(['a', 'b']));
  assert.notEqual(fewer.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  const renamed = buildSnapshot(compiledClusters(['a', 'b', 'd']));
  assert.notEqual(renamed.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
});

test('a rebuild reuses the encoded resource of every unchanged message, beside inserted and removed ones', () => {
  const compiled = compiledClusters(['b', 'd', 'f']);
  const first = buildSnapshot(compiled);
  const [b, , f] = compiled[CLUSTER_TYPE] as [CompiledResource, CompiledResource, CompiledResource];
  const extra = compiledClusters(['a', 'e'])[CLUSTER_TYPE] as [CompiledResource, CompiledResource];
  const next = { ...compiled, [CLUSTER_TYPE]: [extra[0], b, extra[1], f] }; // a added, d removed, e added
  const second = buildSnapshot(next);
  assert.equal(second.resources[CLUSTER_TYPE].get('b'), first.resources[CLUSTER_TYPE].get('b'));
  assert.equal(second.resources[CLUSTER_TYPE].get('f'), first.resources[CLUSTER_TYPE].get('f'));
  assert.equal(second.resources[CLUSTER_TYPE].get('d'), undefined);
  assert.deepEqual([...second.resources[CLUSTER_TYPE].keys()], ['a', 'b', 'e', 'f']);
  const rebuiltFromScratch = buildSnapshot(compiledClusters(['a', 'b', 'e', 'f']));
  assert.equal(second.typeVersions[CLUSTER_TYPE], rebuiltFromScratch.typeVersions[CLUSTER_TYPE]);
});

test('each entry reads its own bytes out of the shared blocks, and its version is their content hash', () => {
  // Enough clusters with long names to span several 64 KiB encoding blocks.
  const names = Array.from(
    { length: 3000 },
    (_, index) => `cluster-${String(index).padStart(5, '0')}-${'x'.repeat(40)}`,
  );
  const compiled = compiledClusters(names);
  const snapshot = buildSnapshot(compiled);
  const blocks = new Set<ArrayBufferLike>();
  for (const resource of compiled[CLUSTER_TYPE]) {
    const name = resource.name;
    const message = messageOf(CLUSTER_TYPE, resource);
    const entry = snapshot.resources[CLUSTER_TYPE].get(name);
    assert.ok(entry, name);
    const bytes = resourceBytes(entry);
    assert.ok(Buffer.from(bytes).equals(Buffer.from(encodeMessageReference(CLUSTER_TYPE, message))), name);
    assert.ok(
      Buffer.from(resourceBytes(entry)).equals(Buffer.from(bytes)),
      `${name}: the same bytes on every read`,
    );
    assert.equal(resourceVersion(entry), contentHash64(bytes), `${name}: version`);
    assert.equal(resourceVersion(entry), resourceVersion(entry));
    blocks.add(bytes.buffer);
  }
  assert.ok(blocks.size > 1 && blocks.size < 100, `${blocks.size} shared blocks`);
});

test('a reusing build gives the type versions of a cold build, whatever was kept, changed, added or removed', () => {
  const next = seededRandom(14);
  const pick = (n: number): number => Math.floor(next() * n);
  const universe = Array.from({ length: 60 }, (_, index) => `c${String(index).padStart(3, '0')}`);
  // name -> the message object its resource holds: the same object means an unchanged resource.
  let live = new Map<string, ProtoObject>();
  const empty = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as CompiledResources;
  const listOf = (): CompiledResource[] =>
    [...live.keys()].sort().map((name) => ({ name, message: live.get(name) as ProtoObject }));
  buildSnapshot({ ...empty, [CLUSTER_TYPE]: listOf() }, { reuse: false });
  for (let step = 0; step < 200; step++) {
    const changed = new Map(live);
    for (let k = 1 + pick(4); k > 0; k--) {
      const name = universe[pick(universe.length)] as string;
      const roll = next();
      if (roll < 0.4) changed.set(name, { name, type: 'EDS', connect_timeout: { seconds: 1 + pick(9) } });
      else if (roll < 0.7) changed.delete(name);
      else if (changed.has(name)) changed.set(name, { ...changed.get(name), name });
    }
    if (step % 50 === 49) changed.clear(); // now and then everything goes
    live = changed;
    const list = listOf();
    if (next() < 0.05) list.reverse(); // out of order: less reuse, the same answer
    const reused = buildSnapshot({ ...empty, [CLUSTER_TYPE]: list });
    const cold = buildSnapshot({ ...empty, [CLUSTER_TYPE]: list }, { reuse: false });
    assert.equal(reused.typeVersions[CLUSTER_TYPE], cold.typeVersions[CLUSTER_TYPE], `step ${step}`);
    assert.equal(reused.version, cold.version, `step ${step}`);
    // The next step reuses from a build whose entries are the reusing one's, as a reload would.
    buildSnapshot({ ...empty, [CLUSTER_TYPE]: list });
  }
});
