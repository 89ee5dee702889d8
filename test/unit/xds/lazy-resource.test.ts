// Compile's per-route resources build their messages when read and keep none: the snapshot builds
// each new message once (and the consistency check then reads the facts kept from it, not a second
// build), an unchanged resource is neither built nor encoded again, and the bytes are the ones the
// same messages encode to when built and held up front.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { IR } from '../../../src/ir/types.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile, type CompiledResources } from '../../../src/xds/compile/compile.js';
import {
  factsOf,
  factsOfMessage,
  isEdsResource,
  isLazy,
  messageOf,
  referencesOf,
  sameCompiledResource,
  type LazyBuilder,
  type LazyResource,
} from '../../../src/xds/compile/lazy-resource.js';
import { resourceBytes, resourceVersion } from '../../../src/xds/snapshot/snapshot-entry.js';
import { encodeMessage, type ProtoObject } from '../../../src/xds/codec/codec.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../../../src/xds/codec/type-urls.js';
import { buildSnapshot } from '../../../src/xds/snapshot/build-snapshot.js';
import { ShapeKeeper } from '../../../src/xds/snapshot/shape-keeper.js';
import { checkConsistency, IncrementalConsistencyCheck } from '../../../src/xds/snapshot/consistency.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { caseNames, GOLDEN_DIR } from '../../support/golden.js';

/** The IR of `count` exact-host routes (per-host delivery), with authorization wired in. */
function irOf(count: number, suffix = ''): IR {
  const parsed = parseConfig({
    document: {
      insecure_server: true,
      routes: Array.from({ length: count }, (_, index) => ({
        from: `https://app-${index}${suffix}.test`,
        to: [`http://10.0.0.${(index % 250) + 1}:8080,3`, `http://10.0.1.${(index % 250) + 1}:8080,1`],
        allow_any_authenticated_user: true,
      })),
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir, problems } = translate(parsed.config, {
    systemCaFile: '/ca.pem',
    internal: {
      authorize: { host: '127.0.0.1', port: 5443 },
      authorizeTimeoutMs: 1000,
      jwksJson: '{"keys":[]}',
    },
  });
  assert.ok(ir, JSON.stringify(problems));
  return ir;
}

/**
 * Counts the message builds of every lazy resource in `compiled`, per type and name, by handing
 * each record a counting copy of its builder (a record listed under two types is wrapped once).
 */
function countBuilds(compiled: CompiledResources): Map<string, number> {
  const builds = new Map<string, number>();
  const wrapped = new Set<LazyResource>();
  for (const type of RESOURCE_TYPES) {
    for (const resource of compiled[type]) {
      if (!isLazy(resource) || wrapped.has(resource)) continue;
      wrapped.add(resource);
      const builder = resource.lazy;
      const counting: LazyBuilder = {
        message(listed, record): ProtoObject {
          const key = `${listed} ${record.name}`;
          builds.set(key, (builds.get(key) ?? 0) + 1);
          return builder.message(listed, record);
        },
        keepsFactsOf: (listed) => builder.keepsFactsOf(listed),
        derivedFacts: (listed, record) => builder.derivedFacts(listed, record),
      };
      (resource as { lazy: LazyBuilder }).lazy = counting;
    }
  }
  return builds;
}

test("compile's per-route resources are lazy: a fresh, equal message on every read", () => {
  const compiled = compile(irOf(3));
  for (const type of [
    CLUSTER_TYPE,
    CLUSTER_LOAD_ASSIGNMENT_TYPE,
    ROUTE_CONFIGURATION_TYPE,
    SCOPED_ROUTE_CONFIGURATION_TYPE,
  ] as const) {
    const lazy = compiled[type].filter(isLazy);
    assert.equal(lazy.length, 3, `${type}: one lazy resource per route`);
    for (const resource of lazy) {
      const first = messageOf(type, resource);
      const second = messageOf(type, resource);
      assert.notEqual(first, second, 'not kept');
      assert.deepEqual(first, second, 'the same content');
      assert.equal(first.name ?? first.cluster_name, resource.name);
    }
  }
});

test('a snapshot builds each new message once, the check after it builds none, and a rebuild builds none', () => {
  const ir = irOf(4);
  const compiled = compile(ir);
  const builds = countBuilds(compiled);
  const snapshot = buildSnapshot(compiled);
  const lazyCount = RESOURCE_TYPES.reduce((sum, type) => sum + compiled[type].filter(isLazy).length, 0);
  assert.equal(lazyCount, 16, 'cluster, endpoints, table and scope per route');
  assert.equal(builds.size, lazyCount, 'every lazy resource was built');
  assert.ok(
    [...builds.values()].every((count) => count === 1),
    JSON.stringify([...builds]),
  );
  assert.deepEqual(new IncrementalConsistencyCheck().check(compiled), []);
  assert.deepEqual(checkConsistency(compiled), []);
  assert.ok(
    [...builds.values()].every((count) => count === 1),
    'the checks read kept facts',
  );

  const again = compile(ir);
  for (const type of RESOURCE_TYPES) {
    again[type].forEach((resource, index) => {
      if (isLazy(resource))
        assert.equal(resource, compiled[type][index], `${type} ${resource.name}: the same object`);
    });
  }
  const rebuilt = buildSnapshot(again);
  assert.ok(
    [...builds.values()].every((count) => count === 1),
    'nothing unchanged is built again',
  );
  for (const type of RESOURCE_TYPES) {
    for (const [name, entry] of snapshot.resources[type]) {
      const resource = compiled[type].find((candidate) => candidate.name === name);
      if (resource !== undefined && isLazy(resource))
        assert.equal(rebuilt.resources[type].get(name), entry, `${type} ${name} reused`);
    }
  }
});

test('the snapshot encodes exactly the bytes of the messages built and held up front', () => {
  const compiled = compile(irOf(300, '-bytes')); // more than one encoding batch per type
  const snapshot = buildSnapshot(compiled);
  for (const type of RESOURCE_TYPES) {
    assert.equal(snapshot.resources[type].size, compiled[type].length, type);
    for (const resource of compiled[type]) {
      const entry = snapshot.resources[type].get(resource.name);
      assert.ok(entry, `${type} ${resource.name}`);
      assert.deepEqual(
        Buffer.from(resourceBytes(entry)),
        Buffer.from(encodeMessage(type, messageOf(type, resource))),
        resource.name,
      );
    }
  }
});

test('kept facts are those of the message: EDS clusters, each route table reference, each scope target', () => {
  const compiled = compile(irOf(2, '-facts'));
  for (const type of RESOURCE_TYPES) {
    for (const resource of compiled[type]) {
      const expected = factsOfMessage(type, messageOf(type, resource));
      // Before and after the facts are kept (compactly: see LazyResource), every way to read them agrees.
      for (const when of ['first read', 'kept']) {
        assert.deepEqual(factsOf(type, resource), expected, `${type} ${resource.name}, ${when}`);
        assert.deepEqual(referencesOf(type, resource), expected.references, `${type} ${resource.name}`);
        assert.equal(isEdsResource(type, resource), expected.eds, `${type} ${resource.name}`);
      }
    }
  }
  const table = compiled[ROUTE_CONFIGURATION_TYPE][0];
  assert.ok(table);
  const references = factsOf(ROUTE_CONFIGURATION_TYPE, table).references;
  assert.equal(references.length % 2, 0, 'pairs');
  assert.ok(references.includes('portcullis-authorize'), 'the JWKS route');
  assert.ok(compiled[CLUSTER_TYPE].some((cluster) => factsOf(CLUSTER_TYPE, cluster).eds));
  const scope = compiled[SCOPED_ROUTE_CONFIGURATION_TYPE][0];
  assert.ok(scope);
  assert.deepEqual(factsOf(SCOPED_ROUTE_CONFIGURATION_TYPE, scope).references, [scope.name]);
  assert.deepEqual(
    factsOfMessage(SCOPED_ROUTE_CONFIGURATION_TYPE, { name: 'x' }).references,
    [],
    'names none',
  );
  assert.equal(factsOfMessage(CLUSTER_TYPE, { name: 'x', type: 'STRICT_DNS' }).eds, false);
});

test("facts read off the inputs (host scopes) equal the message's on every golden case", () => {
  const dir = join(GOLDEN_DIR, 'config-to-ir');
  const cases = caseNames(dir).map((name) => ({
    name,
    ir: parse(readFileSync(join(dir, `${name}.out.yaml`), 'utf8')) as IR,
  }));
  // Without authorization too: no JWKS route leads each table. Several routes per host as well.
  const authorized = irOf(3, '-golden');
  cases.push({ name: 'no authorization', ir: { ...authorized, internal: undefined } });
  let derived = 0;
  for (const { name, ir } of cases) {
    const compiled = compile(ir);
    for (const type of RESOURCE_TYPES) {
      for (const resource of compiled[type]) {
        const expected = factsOfMessage(type, messageOf(type, resource));
        assert.deepEqual(
          referencesOf(type, resource),
          expected.references,
          `${name}: ${type} ${resource.name}`,
        );
        assert.equal(isEdsResource(type, resource), expected.eds, `${name}: ${type} ${resource.name}`);
        if (type === SCOPED_ROUTE_CONFIGURATION_TYPE) derived += isLazy(resource) ? 1 : 0;
      }
    }
  }
  assert.ok(derived > 5, `host scopes were compared (${derived})`);
});

test('two resources holding one message object are the same; lazy ones only as one object', () => {
  const message = { name: 'a' };
  assert.ok(sameCompiledResource({ name: 'a', message }, { name: 'a', message }));
  assert.ok(!sameCompiledResource({ name: 'a', message }, { name: 'b', message }), 'another name');
  assert.ok(!sameCompiledResource({ name: 'a', message }, { name: 'a', message: { name: 'a' } }));
  const [first, second] = compile(irOf(2, '-same'))[CLUSTER_TYPE].filter(isLazy);
  assert.ok(first && second);
  assert.ok(sameCompiledResource(first, first));
  assert.ok(!sameCompiledResource(first, second));
  assert.ok(!sameCompiledResource(first, { name: first.name, message: messageOf(CLUSTER_TYPE, first) }));
});

test('a ShapeKeeper holds at most its size, however many messages it is handed', () => {
  const keeper = new ShapeKeeper(4);
  assert.equal(keeper.size, 0);
  for (let index = 0; index < 10; index++) keeper.keep({ index });
  assert.equal(keeper.size, 4);
});

test('the snapshot keeps no message held by its own resource once a later build replaced it', async () => {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;
  const empty = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as CompiledResources;
  let table: ProtoObject | undefined = { name: 'ingress', virtual_hosts: [] };
  const held = new WeakRef(table);
  buildSnapshot({ ...empty, [ROUTE_CONFIGURATION_TYPE]: [{ name: 'ingress', message: table }] });
  table = undefined;
  buildSnapshot({
    ...empty,
    [ROUTE_CONFIGURATION_TYPE]: [{ name: 'ingress', message: { name: 'ingress' } }],
  });
  await new Promise((resolve) => setImmediate(resolve));
  collect();
  assert.equal(held.deref(), undefined, 'collected: not kept for its shape');
});

test('reuse: false skips looking for unchanged objects and changes nothing but the objects', () => {
  const ir = irOf(40, '-reuse');
  const first = compile(ir);
  const firstSnapshot = buildSnapshot(first);
  const reused = compile(ir);
  const fresh = compile(ir, { reuse: false });
  for (const type of RESOURCE_TYPES) {
    const lazyNames = first[type].filter(isLazy).map((r) => r.name);
    for (const name of lazyNames) {
      const before = first[type].find((resource) => resource.name === name);
      assert.equal(
        reused[type].find((resource) => resource.name === name),
        before,
        `${type} ${name} reused`,
      );
      assert.notEqual(
        fresh[type].find((resource) => resource.name === name),
        before,
        `${type} ${name} new`,
      );
    }
  }
  const freshSnapshot = buildSnapshot(fresh, { reuse: false });
  assert.equal(freshSnapshot.version, firstSnapshot.version, 'same snapshot version');
  for (const type of RESOURCE_TYPES) {
    for (const [name, entry] of firstSnapshot.resources[type]) {
      const now = freshSnapshot.resources[type].get(name);
      assert.ok(now && now !== entry, `${type} ${name}: encoded anew`);
      assert.equal(resourceVersion(now), resourceVersion(entry), `${type} ${name}: same version`);
    }
  }
});

test('one record per route and per host, listed under both of its types, and kept records are plain literals', () => {
  const compiled = compile(irOf(3, '-records'));
  const clusters = compiled[CLUSTER_TYPE].filter(isLazy);
  assert.deepEqual(
    compiled[CLUSTER_LOAD_ASSIGNMENT_TYPE],
    clusters,
    'an EDS cluster is its own endpoints record',
  );
  assert.deepEqual(
    compiled[SCOPED_ROUTE_CONFIGURATION_TYPE],
    compiled[ROUTE_CONFIGURATION_TYPE],
    "a host's scope and table are one record",
  );
  for (const record of clusters) {
    assert.equal(messageOf(CLUSTER_TYPE, record).name, record.name);
    assert.equal(messageOf(CLUSTER_LOAD_ASSIGNMENT_TYPE, record).cluster_name, record.name);
  }
  // V8 pretenures the objects of a literal that survive, never a class's (see LazyResource and
  // SnapshotEntry): every record a build keeps per resource must be a plain object.
  const snapshot = buildSnapshot(compiled);
  for (const type of RESOURCE_TYPES) {
    for (const resource of compiled[type].filter(isLazy))
      assert.equal(
        Object.getPrototypeOf(resource),
        Object.prototype,
        `${type} ${resource.name}: a plain record`,
      );
    for (const entry of snapshot.resources[type].values())
      assert.equal(Object.getPrototypeOf(entry), Object.prototype, `${type} ${entry.name}: a plain entry`);
  }
});
