// The delta a build worker sends (diffBuild) and the main thread applies (applyChunk, assemble):
// what crosses for a cold start, a one-item change, additions, removals, a reorder and repeated
// names; the chunk limits; the key ring crossing only when its secrets change; and chunks that do
// not fit their base refused. Each delta goes through a real structured clone with its bytes
// transferred, as over the worker's port.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../../../src/runtime/build-pipeline.js';
import {
  diffBuild,
  type ChunkLimits,
  type DeltaChunk,
  type SentBase,
} from '../../../src/runtime/build-delta.js';
import { applyChunk, assemble, startStaging, type ReceivedBuild } from '../../../src/runtime/apply-delta.js';
import type { PublishedBuild } from '../../../src/runtime/subscribers.js';
import type { IRCluster, IRVirtualHost } from '../../../src/ir/types.js';
import { CLUSTER_TYPE, RESOURCE_TYPES } from '../../../src/proto/type-urls.js';
import type { EncodedResource } from '../../../src/xds/snapshot/types.js';
import { SIGN_IN_YAML } from '../../support/sign-in-config.js';

const secrets = { sharedSecret: randomBytes(32), cookieSecret: randomBytes(32) };

/** A real build of `routes` routes (r0.test ...), as the worker has it, without its memo. */
function realBuild(routes: number, extra = ''): PublishedBuild {
  const dir = mkdtempSync(join(tmpdir(), 'delta-'));
  const path = join(dir, 'config.yaml');
  const lines = Array.from(
    { length: routes },
    (_, i) => `  - from: https://r${i}.test\n    to: http://127.0.0.1:${9000 + i}\n`,
  );
  writeFileSync(
    path,
    `insecure_server: true\naddress: :8080\n${extra}${SIGN_IN_YAML}routes:\n${lines.join('')}`,
  );
  const built = build({
    configPath: path,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt', generatedSecrets: secrets },
  });
  assert.ok(built.ok, JSON.stringify(built.ok ? [] : built.problems));
  const { memo: _memo, ...published } = built;
  return published;
}

/** Sends `chunks` as the port would (structured clone, bytes transferred) and applies them to `base`. */
function receive(base: ReceivedBuild | undefined, chunks: readonly DeltaChunk[]): ReceivedBuild {
  const crossed = chunks.map((chunk) =>
    structuredClone(chunk, chunk.bytes === undefined ? undefined : { transfer: [chunk.bytes] }),
  );
  const staging = startStaging(crossed[0] as DeltaChunk);
  for (const chunk of crossed) applyChunk(staging, chunk);
  return assemble(base, staging);
}

/** One round: the delta from what was sent to `next`, received onto what was received. */
function round(
  state: { sent: SentBase | undefined; received: ReceivedBuild | undefined },
  next: PublishedBuild,
  limits?: ChunkLimits,
): DeltaChunk[] {
  const delta = diffBuild(state.sent, next, [], limits);
  state.received = receive(state.received, delta.chunks);
  state.sent = delta.next;
  return delta.chunks;
}

/** The build's content as comparable data (resource bytes as hex). */
function content(built: PublishedBuild): unknown {
  const resources = RESOURCE_TYPES.map((type) =>
    [...built.snapshot.resources[type].values()].map((r) => [
      r.name,
      r.version,
      Buffer.from(r.bytes).toString('hex'),
    ]),
  );
  return {
    ir: JSON.parse(JSON.stringify(built.ir)) as unknown,
    irKeys: Object.keys(built.ir),
    version: built.snapshot.version,
    typeVersions: built.snapshot.typeVersions,
    resources,
    jwks: built.keys.jwksJson,
    warnings: built.warnings,
    filesRead: built.filesRead,
    timings: built.timingsMs,
  };
}

const itemsIn = (chunks: readonly DeltaChunk[]): number =>
  chunks.reduce(
    (sum, c) =>
      sum +
      (c.virtualHosts?.changed?.length ?? 0) +
      (c.virtualHosts?.added?.length ?? 0) +
      (c.clusters?.changed?.length ?? 0) +
      (c.clusters?.added?.length ?? 0),
    0,
  );

/** `built` with its virtual hosts and clusters replaced (resources left as they are). */
function withItems(
  built: PublishedBuild,
  virtualHosts: readonly IRVirtualHost[],
  clusters?: readonly IRCluster[],
): PublishedBuild {
  return { ...built, ir: { ...built.ir, virtualHosts, clusters: clusters ?? built.ir.clusters } };
}

test('a cold start sends everything; the main side puts together the very build, key ring included', () => {
  const built = realBuild(30);
  const state = { sent: undefined, received: undefined } as Parameters<typeof round>[0];
  const chunks = round(state, built);
  assert.equal(chunks[0]?.from, 0);
  assert.ok(chunks[0]?.header?.secrets !== undefined, 'the first delta carries the secrets');
  assert.deepEqual(content(state.received!.build), content(built));
  assert.equal(state.received!.build.keys.grpcCredential, built.keys.grpcCredential);
  assert.ok(Buffer.isBuffer(state.received!.build.keys.sharedSecret), 'the shared secret is a Buffer again');
});

test('only what changed crosses: one changed virtual host is one item; the rest stay the very objects', () => {
  const first = realBuild(40);
  const state = { sent: undefined, received: undefined } as Parameters<typeof round>[0];
  round(state, first);
  const before = state.received!.build;
  const hosts = [...first.ir.virtualHosts];
  const changed = { ...hosts[5]!, domains: ['changed.test'] };
  hosts[5] = changed;
  const chunks = round(state, withItems(first, hosts));
  assert.equal(itemsIn(chunks), 1);
  assert.equal(chunks.length, 1);
  assert.equal(chunks[0]?.header?.secrets, undefined, 'same secrets: the ring does not cross');
  const after = state.received!.build;
  assert.equal(after.keys, before.keys, 'the key ring is the same object');
  assert.deepEqual(after.ir.virtualHosts[5], changed);
  after.ir.virtualHosts.forEach((host, i) => {
    if (i !== 5) assert.equal(host, before.ir.virtualHosts[i]);
  });
  assert.equal(after.ir.clusters, before.ir.clusters, 'unchanged clusters: the same array');
  for (const type of RESOURCE_TYPES)
    assert.equal(after.snapshot.resources[type], before.snapshot.resources[type]);
  assert.equal(before.changes, undefined, 'the first build changes nothing known');
  assert.equal(after.changes?.base, before.ir, 'the changes are relative to the build received before');
  assert.deepEqual([...after.changes.virtualHosts], [changed.name]);
  assert.deepEqual([...after.changes.clusters], []);
});

test('additions, removals and a reorder keep the sender order; repeated names start over', () => {
  const first = realBuild(20);
  const state = { sent: undefined, received: undefined } as Parameters<typeof round>[0];
  round(state, first);
  const hosts = first.ir.virtualHosts;
  const named = (name: string): IRVirtualHost => ({ name, domains: [`${name}.test`], routes: [] });
  const cases: IRVirtualHost[][] = [
    [named('0-first'), ...hosts.slice(0, 7), named('m-middle'), ...hosts.slice(7), named('zz-last')],
    hosts.filter((_, i) => i % 3 !== 0),
    [named('new'), ...hosts.filter((_, i) => i % 2 === 0)],
    [...hosts].reverse(),
    [...hosts.slice(0, 4), named('dup'), named('dup'), ...hosts.slice(10)],
    [...hosts],
    [],
    [named('again')],
  ];
  for (const [i, next] of cases.entries()) {
    const chunks = round(state, withItems(first, next), { items: 3, names: 4 });
    assert.deepEqual(
      state.received!.build.ir.virtualHosts.map((h) => h.name),
      next.map((h) => h.name),
      `case ${i}`,
    );
    assert.deepEqual(
      JSON.parse(JSON.stringify(state.received!.build.ir)),
      JSON.parse(JSON.stringify(withItems(first, next).ir)),
      `case ${i}`,
    );
    for (const chunk of chunks.slice(1)) assert.equal(chunk.header, undefined);
  }
});

test('chunks hold at most the limit; every one applies in order into one build swapped in at the end', () => {
  const built = realBuild(60);
  const limits = { items: 7, names: 11 };
  const delta = diffBuild(undefined, built, [], limits);
  assert.ok(delta.chunks.length > 10, `${delta.chunks.length} chunks`);
  for (const chunk of delta.chunks) {
    const items =
      itemsIn([chunk]) +
      Object.values(chunk.resources ?? {}).reduce(
        (n, p) => n + (p.changed?.length ?? 0) + (p.added?.length ?? 0),
        0,
      );
    assert.ok(items <= limits.items, `${items} items in a chunk`);
  }
  assert.deepEqual(
    delta.chunks.map((c) => c.last),
    delta.chunks.map((_, i) => i === delta.chunks.length - 1),
  );
  const staging = startStaging(delta.chunks[0]!);
  for (const chunk of delta.chunks.slice(0, -1)) applyChunk(staging, chunk);
  assert.throws(() => assemble(undefined, staging), /incomplete/);
  applyChunk(staging, delta.chunks.at(-1)!);
  assert.deepEqual(content(assemble(undefined, staging).build), content(built));
});

test('resources cross when their version changed; an equal version stays the object received before', () => {
  const first = realBuild(10);
  const state = { sent: undefined, received: undefined } as Parameters<typeof round>[0];
  round(state, first);
  const clusters = first.snapshot.resources[CLUSTER_TYPE];
  const [name, resource] = [...clusters][2]!;
  const changed: EncodedResource = { name, version: 'changed', bytes: new Uint8Array([1, 2, 3]) };
  const copy: EncodedResource = {
    ...[...clusters.values()][3]!,
    bytes: new Uint8Array([...[...clusters.values()][3]!.bytes]),
  };
  const next = new Map(
    [...clusters].map(([n, r]) => [n, n === name ? changed : n === copy.name ? copy : r] as const),
  );
  const before = state.received!.build.snapshot.resources[CLUSTER_TYPE];
  const chunks = round(state, {
    ...first,
    snapshot: { ...first.snapshot, resources: { ...first.snapshot.resources, [CLUSTER_TYPE]: next } },
  });
  const crossed = chunks.flatMap((c) => c.resources?.[CLUSTER_TYPE]?.changed ?? []);
  assert.deepEqual(
    crossed.map((r) => r.name),
    [name],
  );
  const after = state.received!.build.snapshot.resources[CLUSTER_TYPE];
  assert.deepEqual([...after.get(name)!.bytes], [1, 2, 3]);
  assert.equal(after.get(copy.name), before.get(copy.name), 'same version: the object received before');
  const changedFrom = state.received!.build.snapshot.changedFrom;
  assert.deepEqual(changedFrom?.names[CLUSTER_TYPE], [name], 'the snapshot names the changed resource');
  assert.equal(changedFrom?.typeVersions[CLUSTER_TYPE], first.snapshot.typeVersions[CLUSTER_TYPE]);
  for (const type of RESOURCE_TYPES)
    if (type !== CLUSTER_TYPE) assert.deepEqual(changedFrom?.names[type], [], `${type}: nothing changed`);
  assert.notEqual(resource, undefined);
});

test('the key ring crosses when a secret changed, and keeps derived keys the shared secret still gives', () => {
  const first = realBuild(3);
  const state = { sent: undefined, received: undefined } as Parameters<typeof round>[0];
  round(state, first);
  const before = state.received!.build.keys;
  const otherCookie = { ...first, keys: { ...first.keys, cookieSecret: randomBytes(32) } };
  const chunks = round(state, otherCookie);
  assert.ok(chunks[0]?.header?.secrets !== undefined);
  const after = state.received!.build.keys;
  assert.notEqual(after, before);
  assert.ok(after.cookieSecret.equals(otherCookie.keys.cookieSecret));
  assert.equal(after.signingKey, before.signingKey, 'same shared secret: the same derived signing key');
  assert.equal(after.handles, before.handles);
});

test('a chunk of another build, or a delta from another base, is refused', () => {
  const built = realBuild(5);
  const one = diffBuild(undefined, built, [], { items: 2, names: 2 });
  const two = diffBuild(one.next, built, []);
  const staging = startStaging(one.chunks[0]!);
  assert.throws(() => applyChunk(staging, two.chunks[0]!), /does not belong/);
  const other = startStaging(two.chunks[0]!);
  for (const chunk of two.chunks) applyChunk(other, chunk);
  assert.throws(() => assemble(undefined, other), /cannot apply/);
});
