// The snapshot stage: each resource is protobufjs's encoding of its message, versioned by a hash of
// its bytes; type versions depend only on the set of (name, version) pairs; and a build that reuses
// the previous build's cache gives exactly the snapshot a build without one gives.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { CLUSTER_TYPE, RESOURCE_TYPES } from '../../../src/proto/type-urls.js';
import type { CompiledResource, CompiledResources } from '../../../src/proto/compiled.js';
import { buildSnapshot, type EncodeCache } from '../../../src/xds/snapshot/build-snapshot.js';
import { messageType } from '../../../src/proto/proto-root.js';
import type { Message } from '../../../src/proto/messages.js';
import { seededRandom } from '../../support/seeded-random.js';

/** Compiled resources with the given clusters and nothing else. */
function compiledWith(clusters: readonly CompiledResource<typeof CLUSTER_TYPE>[]): CompiledResources {
  const empty = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as CompiledResources;
  return { ...empty, [CLUSTER_TYPE]: clusters };
}

/** Clusters with the given names (fresh message objects each call). */
function clusters(names: readonly string[], timeoutSeconds = 1): CompiledResources {
  return compiledWith(
    names.map((name) => ({
      name,
      message: { name, type: 'STATIC', connect_timeout: { seconds: timeoutSeconds, nanos: 0 } },
    })),
  );
}

test('each resource holds protobufjs encoding of its message, versioned by a hash of those bytes', () => {
  const compiled = clusters(['a', 'b', 'c']);
  const { snapshot } = buildSnapshot(compiled);
  const type = messageType(CLUSTER_TYPE);
  for (const { name, message } of compiled[CLUSTER_TYPE]) {
    const entry = snapshot.resources[CLUSTER_TYPE].get(name);
    assert.ok(entry, name);
    const expected = type.encode(type.fromObject(message)).finish();
    assert.ok(Buffer.from(entry.bytes).equals(Buffer.from(expected)), name);
    assert.equal(entry.version, createHash('sha256').update(expected).digest('hex').slice(0, 16));
  }
  assert.deepEqual([...snapshot.resources[CLUSTER_TYPE].keys()], ['a', 'b', 'c']);
});

test('a type version depends only on its (name, version) pairs: same content, same version', () => {
  const first = buildSnapshot(clusters(['a', 'b', 'c'])).snapshot;
  const again = buildSnapshot(clusters(['a', 'b', 'c'])).snapshot; // new objects, same content
  assert.equal(again.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  assert.equal(again.version, first.version);
  const unsorted = buildSnapshot(clusters(['c', 'a', 'b'])).snapshot;
  assert.equal(
    unsorted.typeVersions[CLUSTER_TYPE],
    first.typeVersions[CLUSTER_TYPE],
    'order does not matter',
  );
  const changed = buildSnapshot(clusters(['a', 'b', 'c'], 2)).snapshot;
  assert.notEqual(changed.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  assert.notEqual(changed.version, first.version);
  const fewer = buildSnapshot(clusters(['a', 'b'])).snapshot;
  assert.notEqual(fewer.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  const renamed = buildSnapshot(clusters(['a', 'b', 'd'])).snapshot;
  assert.notEqual(renamed.typeVersions[CLUSTER_TYPE], first.typeVersions[CLUSTER_TYPE]);
  for (const type of RESOURCE_TYPES)
    if (type !== CLUSTER_TYPE) assert.equal(changed.typeVersions[type], first.typeVersions[type]);
});

test('the cache holds exactly the last build and is used by content: an edited message is encoded again', () => {
  const first = buildSnapshot(clusters(['a', 'b']));
  assert.equal(first.cache.resources[CLUSTER_TYPE].size, 2);
  const message = (seconds: number): Message<typeof CLUSTER_TYPE> => ({
    name: 'a',
    type: 'STATIC',
    connect_timeout: { seconds },
  });
  // The same content key with another message would be a compile bug; without keys, the message decides.
  const edited = buildSnapshot(compiledWith([{ name: 'a', message: message(7) }]), first.cache);
  assert.equal(edited.cache.resources[CLUSTER_TYPE].size, 1, 'entries the build did not use are dropped');
  const fresh = buildSnapshot(compiledWith([{ name: 'a', message: message(7) }])).snapshot;
  assert.equal(edited.snapshot.version, fresh.version);
  // A resource compile keyed by content reuses the earlier encoding under that key.
  const keyed = buildSnapshot(compiledWith([{ name: 'a', message: message(1), contentKey: 'k1' }]));
  const reused = buildSnapshot(
    compiledWith([{ name: 'a', message: message(1), contentKey: 'k1' }]),
    keyed.cache,
  );
  assert.equal(
    reused.snapshot.resources[CLUSTER_TYPE].get('a'),
    keyed.snapshot.resources[CLUSTER_TYPE].get('a'),
  );
});

test('a build with the previous cache gives the snapshot of a build without, whatever changed', () => {
  const next = seededRandom(14);
  const pick = (n: number): number => Math.floor(next() * n);
  const universe = Array.from({ length: 60 }, (_, index) => `c${String(index).padStart(3, '0')}`);
  let live = new Map<string, Message<typeof CLUSTER_TYPE>>();
  let cache: EncodeCache | undefined;
  for (let step = 0; step < 200; step++) {
    const changed = new Map(live);
    for (let k = 1 + pick(4); k > 0; k--) {
      const name = universe[pick(universe.length)] as string;
      const roll = next();
      if (roll < 0.4) changed.set(name, { name, type: 'EDS', connect_timeout: { seconds: 1 + pick(9) } });
      else if (roll < 0.7) changed.delete(name);
      else if (changed.has(name)) changed.set(name, { ...changed.get(name), name });
    }
    if (step % 50 === 49) changed.clear();
    live = changed;
    const list = [...live.keys()]
      .sort()
      .map((name) => ({ name, message: live.get(name) as Message<typeof CLUSTER_TYPE> }));
    const withCache = buildSnapshot(compiledWith(list), cache);
    const cold = buildSnapshot(compiledWith(list));
    assert.equal(withCache.snapshot.version, cold.snapshot.version, `step ${step}`);
    assert.deepEqual(withCache.snapshot.typeVersions, cold.snapshot.typeVersions, `step ${step}`);
    for (const [name, entry] of cold.snapshot.resources[CLUSTER_TYPE]) {
      const reused = withCache.snapshot.resources[CLUSTER_TYPE].get(name);
      assert.equal(reused?.version, entry.version, `step ${step} ${name}`);
      assert.ok(Buffer.from(reused.bytes).equals(Buffer.from(entry.bytes)), `step ${step} ${name}`);
    }
    cache = withCache.cache;
  }
});

test('from the previous cache, a list of the identical resources is the previous type; one replaced is encoded alone', () => {
  const resource = (name: string, seconds: number): CompiledResource<typeof CLUSTER_TYPE> => ({
    name,
    message: { name, type: 'STATIC', connect_timeout: { seconds } },
    contentKey: `${name}:${seconds}`,
  });
  const list = ['a', 'b', 'c', 'd', 'e'].map((name) => resource(name, 1));
  const first = buildSnapshot(compiledWith(list));
  const same = buildSnapshot(compiledWith([...list]), first.cache);
  assert.equal(same.encoded, 0);
  assert.equal(same.snapshot.resources[CLUSTER_TYPE], first.snapshot.resources[CLUSTER_TYPE], 'the very map');
  assert.equal(same.snapshot.version, first.snapshot.version);
  const edited = [...list];
  edited[2] = resource('c', 9);
  const next = buildSnapshot(compiledWith(edited), same.cache);
  assert.equal(next.encoded, 1);
  const cold = buildSnapshot(compiledWith(edited));
  assert.equal(next.snapshot.version, cold.snapshot.version);
  assert.deepEqual([...next.snapshot.resources[CLUSTER_TYPE].keys()], ['a', 'b', 'c', 'd', 'e']);
  for (const name of ['a', 'b', 'd', 'e'])
    assert.equal(
      next.snapshot.resources[CLUSTER_TYPE].get(name),
      first.snapshot.resources[CLUSTER_TYPE].get(name),
    );
  assert.notEqual(
    next.snapshot.resources[CLUSTER_TYPE].get('c'),
    first.snapshot.resources[CLUSTER_TYPE].get('c'),
  );
  // Back to the first content: its encoding is gone from the cache (one build's worth), so encoded again.
  const back = buildSnapshot(compiledWith(list), next.cache);
  assert.equal(back.encoded, 1);
  assert.equal(back.snapshot.version, first.snapshot.version);
  assert.equal(back.cache.resources[CLUSTER_TYPE].size, 5);
});

test('resources kept as the same objects across random edits give the snapshot of a build without a cache', () => {
  const next = seededRandom(36);
  const pick = (n: number): number => Math.floor(next() * n);
  const universe = Array.from({ length: 40 }, (_, index) => `c${String(index).padStart(3, '0')}`);
  const live = new Map<string, CompiledResource<typeof CLUSTER_TYPE>>();
  const make = (name: string): CompiledResource<typeof CLUSTER_TYPE> => {
    const seconds = 1 + pick(5);
    const keyed = next() < 0.5 ? { contentKey: `${name}:${seconds}` } : {};
    return { name, message: { name, type: 'EDS', connect_timeout: { seconds } }, ...keyed };
  };
  for (const name of universe) live.set(name, make(name));
  let cache: EncodeCache | undefined;
  for (let step = 0; step < 300; step++) {
    // Mostly replacements in place (one or a few), sometimes an addition or a removal.
    for (let k = 1 + pick(3); k > 0; k--) {
      const name = universe[pick(universe.length)] as string;
      const roll = next();
      if (roll < 0.8 || !live.has(name)) live.set(name, make(name));
      else live.delete(name);
    }
    const list = [...live.keys()]
      .sort()
      .map((name) => live.get(name) as CompiledResource<typeof CLUSTER_TYPE>);
    const withCache = buildSnapshot(compiledWith(list), cache);
    const cold = buildSnapshot(compiledWith(list));
    assert.equal(withCache.snapshot.version, cold.snapshot.version, `step ${step}`);
    assert.deepEqual(
      [...withCache.snapshot.resources[CLUSTER_TYPE].keys()],
      [...cold.snapshot.resources[CLUSTER_TYPE].keys()],
    );
    for (const [name, entry] of cold.snapshot.resources[CLUSTER_TYPE])
      assert.equal(
        withCache.snapshot.resources[CLUSTER_TYPE].get(name)?.version,
        entry.version,
        `step ${step} ${name}`,
      );
    cache = withCache.cache;
  }
});
