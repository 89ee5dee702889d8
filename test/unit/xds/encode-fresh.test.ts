// The snapshot's encoding walk: every missing entry encoded once, with its own bytes and line
// hash, the types taking turns a batch at a time (so a route's resources are built close together),
// each type in its encode order, and a reload's few missing entries in one round.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../../../src/xds/codec/type-urls.js';
import { encodeMessageReference, type ProtoObject } from '../../../src/xds/codec/codec.js';
import { NO_FACTS, type LazyBuilder, type LazyResource } from '../../../src/xds/compile/lazy-resource.js';
import { addLine, encodeFresh, type TypeEncoding } from '../../../src/xds/snapshot/encode-fresh.js';
import { resourceBytes, type SnapshotEntry } from '../../../src/xds/snapshot/snapshot-entry.js';

/** The batch the walk promises not to run ahead by (encode-fresh.ts's ENCODE_BATCH). */
const BATCH = 256;

/** A message of `type` that names `name` (enough for the encoder; every type has a name field). */
function messageFor(type: ResourceType, name: string): ProtoObject {
  return type === CLUSTER_LOAD_ASSIGNMENT_TYPE ? { cluster_name: name } : { name };
}

/** Lazy records whose builder logs every message it builds, as `type index`. */
function loggingRecords(log: string[]): (count: number, prefix: string) => LazyResource[] {
  const builder: LazyBuilder = {
    message(type: ResourceType, record: LazyResource): ProtoObject {
      log.push(`${type} ${(record.source as { index: number }).index}`);
      return messageFor(type, record.name);
    },
    keepsFactsOf: () => false,
    derivedFacts: () => NO_FACTS,
  };
  return (count, prefix) =>
    Array.from({ length: count }, (_, index) => ({
      name: `${prefix}${String(index).padStart(6, '0')}`,
      lazy: builder,
      source: { index },
      context: undefined,
      facts: undefined,
    }));
}

function encoding(
  type: ResourceType,
  list: readonly LazyResource[],
  order?: Int32Array,
  entries: (SnapshotEntry | undefined)[] = new Array<SnapshotEntry | undefined>(list.length),
): TypeEncoding {
  entries.length = list.length;
  let missing = 0;
  for (let index = 0; index < list.length; index++) if (entries[index] === undefined) missing++;
  return { type, list, entries, order, sums: new Int32Array(2), missing };
}

test('a cold walk encodes every entry once, with its own bytes, and sums their line hashes', () => {
  const log: string[] = [];
  const records = loggingRecords(log);
  const types = [
    encoding(CLUSTER_TYPE, records(1001, 'route-')),
    encoding(CLUSTER_LOAD_ASSIGNMENT_TYPE, records(1000, 'route-')),
    encoding(LISTENER_TYPE, records(1, 'listener-')),
    encoding(SCOPED_ROUTE_CONFIGURATION_TYPE, records(700, 'ingress/')),
    encoding(ROUTE_CONFIGURATION_TYPE, records(700, 'ingress/')),
  ];
  encodeFresh(types);
  assert.equal(log.length, 1001 + 1000 + 1 + 700 + 700);
  assert.equal(new Set(log).size, log.length, 'no message built twice');
  for (const { type, list, entries, sums } of types) {
    const expected = new Int32Array(2);
    list.forEach((record, index) => {
      const entry = entries[index];
      assert.ok(entry !== undefined, `${type} ${index} encoded`);
      assert.equal(entry.name, record.name);
      assert.deepEqual(
        Buffer.from(resourceBytes(entry)),
        Buffer.from(encodeMessageReference(type, messageFor(type, record.name))),
      );
      addLine(expected, entry);
    });
    assert.deepEqual(sums, expected, `${type} sums`);
  }
});

test('the types take turns: none runs more than a batch ahead of another, in proportion to its size', () => {
  const log: string[] = [];
  const records = loggingRecords(log);
  const sizes: [ResourceType, number][] = [
    [CLUSTER_TYPE, 2001],
    [CLUSTER_LOAD_ASSIGNMENT_TYPE, 2000],
    [SCOPED_ROUTE_CONFIGURATION_TYPE, 500],
    [ROUTE_CONFIGURATION_TYPE, 500],
  ];
  encodeFresh(sizes.map(([type, count]) => encoding(type, records(count, 'r-'))));
  assert.equal(log.length, 2001 + 2000 + 500 + 500);
  const done = new Map<string, number>(sizes.map(([type]) => [type, 0]));
  const share = (type: string): number =>
    (done.get(type) as number) / (sizes.find(([name]) => name === type)?.[1] as number);
  let longestRun = 0;
  let run = 0;
  let last = '';
  for (const line of log) {
    const type = line.split(' ')[0] as string;
    done.set(type, (done.get(type) as number) + 1);
    run = type === last ? run + 1 : 1;
    last = type;
    longestRun = Math.max(longestRun, run);
    for (const [other] of sizes) {
      assert.ok(
        share(type) - share(other) <= BATCH / 2001 + 1e-9,
        `${type} at ${share(type)} ran ahead of ${other} at ${share(other)}`,
      );
    }
  }
  assert.ok(longestRun <= BATCH, `a stint of ${longestRun} messages`);
  // Type-major order (the walk before it took turns) would be one run per type.
  assert.ok(longestRun < 2000, 'the types interleave');
});

test('each type walks its own encode order', () => {
  const log: string[] = [];
  const records = loggingRecords(log);
  const count = 600;
  const order = Int32Array.from({ length: count }, (_, k) => (k * 7) % count); // 7 and 600 are coprime
  encodeFresh([encoding(CLUSTER_TYPE, records(count, 'route-'), order)]);
  assert.deepEqual(
    log,
    Array.from(order, (index) => `${CLUSTER_TYPE} ${index}`),
  );
});

test('a reload encodes only the missing entries, in one round, and keeps the reused ones', () => {
  const log: string[] = [];
  const records = loggingRecords(log);
  const list = records(1000, 'route-');
  const seed = encoding(CLUSTER_TYPE, list);
  encodeFresh([seed]);
  log.length = 0;
  const kept = [...seed.entries];
  const missingAt = [3, 400, 999];
  const entries = kept.map((entry, index) => (missingAt.includes(index) ? undefined : entry));
  const reload = encoding(CLUSTER_TYPE, list, undefined, entries);
  assert.equal(reload.missing, 3);
  encodeFresh([reload, encoding(ROUTE_CONFIGURATION_TYPE, [])]);
  assert.deepEqual(
    log,
    missingAt.map((index) => `${CLUSTER_TYPE} ${index}`),
  );
  reload.entries.forEach((entry, index) => {
    if (!missingAt.includes(index)) assert.equal(entry, kept[index], 'reused entry kept by identity');
    else
      assert.deepEqual(
        Buffer.from(resourceBytes(entry as SnapshotEntry)),
        Buffer.from(resourceBytes(kept[index] as SnapshotEntry)),
      );
  });
});
