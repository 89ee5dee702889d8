// The reload loop without Envoy: how files really change on disk (editor renames, in-place
// writes, Kubernetes ConfigMap symlink swaps, touches, deletions) and what gets published.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reloader } from '../../../src/runtime/reloader.js';
import { snapshotSubscriber } from '../../../src/runtime/subscribers.js';
import { SnapshotStore } from '../../../src/xds/snapshot/snapshot-store.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { formatProblem, ValidationError } from '../../../src/shared/errors.js';
import { SIGN_IN, SIGN_IN_YAML, signInLines } from '../../support/sign-in-config.js';
import { waitFor } from '../../support/wait.js';
import { CLUSTER_TYPE, ROUTE_CONFIGURATION_TYPE } from '../../../src/proto/type-urls.js';
import type { EncodedResource } from '../../../src/xds/snapshot/types.js';
import type { PublishedBuild } from '../../../src/runtime/subscribers.js';

/** The route hosts a build serves (its virtual hosts' first domains, sorted as the IR sorts them). */
function hostsOf(build: PublishedBuild | undefined): string[] {
  return (build?.ir.virtualHosts ?? []).map((host) => host.domains[0] ?? '');
}

function configText(host: string): string {
  return `insecure_server: true\naddress: :8080\n${SIGN_IN_YAML}routes:\n  - from: https://${host}\n    to: http://127.0.0.1:9000\n`;
}

function setup(configPath: string): { reloader: Reloader; store: SnapshotStore; published: string[] } {
  const store = new SnapshotStore();
  const published: string[] = [];
  store.subscribe((snapshot) => published.push(snapshot.version));
  const reloader = new Reloader({
    configPath,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    subscribers: [snapshotSubscriber(store)],
    logger: recordingLogger(),
    settleMs: 20,
  });
  return { reloader, store, published };
}

test('an invalid first config throws a ValidationError listing every problem', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, 'routes:\n  - from: https://a.test/x\n    to: nope\n');
  const { reloader } = setup(path);
  assert.throws(
    () => reloader.loadInitial(),
    (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      const paths = err.problems.map((problem) => problem.path);
      assert.deepEqual(paths.sort(), ['certificate', 'routes[0].from', 'routes[0].to'].sort());
      return true;
    },
  );
  rmSync(dir, { recursive: true });
});

test('editor-style atomic renames and in-place writes are picked up; a touch is not a change', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, configText('one.test'));
  const { reloader, published } = setup(path);
  try {
    reloader.loadInitial();
    assert.equal(published.length, 1);
    writeFileSync(`${path}.swp`, configText('two.test'));
    renameSync(`${path}.swp`, path);
    await waitFor(async () => published.length === 2, { what: 'the renamed file to be published' });
    writeFileSync(path, configText('three.test'));
    await waitFor(async () => published.length === 3, { what: 'the in-place write to be published' });
    const reloadsBefore = reloader.current().reloads;
    utimesSync(path, new Date(), new Date());
    writeFileSync(path, configText('three.test'));
    writeFileSync(path, configText('four.test'));
    await waitFor(async () => published.length === 4, { what: 'the last real change to be published' });
    assert.equal(
      reloader.current().reloads,
      reloadsBefore + 1,
      'the touch and the identical write did not reload',
    );
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('a Kubernetes ConfigMap ..data symlink swap is picked up', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'configmap-'));
  mkdirSync(join(dir, '..2026_11_22_v1'));
  writeFileSync(join(dir, '..2026_11_22_v1', 'config.yaml'), configText('v1.test'));
  symlinkSync('..2026_11_22_v1', join(dir, '..data'));
  symlinkSync(join('..data', 'config.yaml'), join(dir, 'config.yaml'));
  const { reloader, store, published } = setup(join(dir, 'config.yaml'));
  try {
    reloader.loadInitial();
    mkdirSync(join(dir, '..2026_11_22_v2'));
    writeFileSync(join(dir, '..2026_11_22_v2', 'config.yaml'), configText('v2.test'));
    symlinkSync('..2026_11_22_v2', join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    rmSync(join(dir, '..2026_11_22_v1'), { recursive: true });
    await waitFor(async () => published.length === 2, { what: 'the swapped ConfigMap to be published' });
    assert.equal(hostsOf(reloader.lastGoodBuild())[0], 'v2.test');
    assert.equal(store.current()?.version, published[1]);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('a vanished file keeps the last good snapshot and counts a failure; its return reloads', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, configText('kept.test'));
  const { reloader, store, published } = setup(path);
  try {
    reloader.loadInitial();
    const kept = store.current()?.version;
    rmSync(path);
    await waitFor(async () => reloader.current().failures === 1, { what: 'the deletion to be reported' });
    assert.equal(store.current()?.version, kept);
    assert.equal(reloader.current().lastSuccess, false);
    assert.match(reloader.current().lastProblems[0]?.message ?? '', /ENOENT/);
    writeFileSync(path, configText('returned.test'));
    await waitFor(async () => published.length === 2, { what: 'the returned file to be published' });
    assert.equal(reloader.current().lastSuccess, true);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('a reload re-encodes only what changed (the last good build carries the cache); an invalid one keeps it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  const routes = (middle: string): string =>
    ['a', middle, 'c']
      .map((host) => `  - from: https://${host}.test\n    to: http://127.0.0.1:9000\n`)
      .join('');
  writeFileSync(path, `insecure_server: true\naddress: :8080\n${SIGN_IN_YAML}routes:\n${routes('b')}`);
  const { reloader, store } = setup(path);
  try {
    const first = reloader.loadInitial();
    writeFileSync(path, `insecure_server: true\naddress: :8080\n${SIGN_IN_YAML}routes:\n${routes('b2')}`);
    const second = reloader.reload();
    assert.ok(second.ok);
    assert.deepEqual(hostsOf(second), ['a.test', 'b2.test', 'c.test']);
    for (const type of [CLUSTER_TYPE, ROUTE_CONFIGURATION_TYPE] as const) {
      const was: ReadonlyMap<string, EncodedResource> = first.snapshot.resources[type];
      const now: ReadonlyMap<string, EncodedResource> = second.snapshot.resources[type];
      const kept = [...now.values()].filter((resource) => was.get(resource.name) === resource);
      assert.equal(kept.length, now.size - 1, `${type}: every resource but the changed route's is reused`);
    }
    writeFileSync(path, 'routes: [nope]\n');
    const rejected = reloader.reload();
    assert.equal(rejected.ok, false);
    assert.equal(reloader.lastGoodBuild(), second);
    assert.equal(store.current(), second.snapshot);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('each good build reaches the subscribers in order; one that throws rejects the build for the rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, configText('one.test'));
  const seen: string[] = [];
  let refuse = false;
  const logger = recordingLogger();
  const reloader = new Reloader({
    configPath: path,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    subscribers: [
      {
        name: 'first',
        publish: (build) => {
          if (refuse) throw new Error('no thanks');
          seen.push(`first ${build.snapshot.version}`);
        },
      },
      { name: 'second', publish: (build) => seen.push(`second ${build.snapshot.version}`) },
    ],
    logger,
  });
  try {
    const initial = reloader.loadInitial();
    assert.deepEqual(seen, [`first ${initial.snapshot.version}`, `second ${initial.snapshot.version}`]);
    refuse = true;
    writeFileSync(path, configText('two.test'));
    const refused = reloader.reload();
    assert.equal(refused.ok, false);
    if (!refused.ok) {
      assert.equal(refused.stage, 'publish');
      assert.match(refused.problems[0]?.message ?? '', /first could not take the config: no thanks/);
    }
    assert.equal(seen.length, 2, 'the second subscriber never saw the refused build');
    assert.equal(reloader.lastGoodBuild()?.snapshot.version, initial.snapshot.version);
    assert.equal(reloader.current().failures, 1);
    refuse = false;
    const accepted = reloader.reload();
    assert.ok(accepted.ok);
    assert.deepEqual(seen.slice(2), [
      `first ${accepted.snapshot.version}`,
      `second ${accepted.snapshot.version}`,
    ]);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

/** A reloader with the default settle time that records the hosts of every build it publishes. */
function hostRecorder(configPath: string): { reloader: Reloader; published: string[][] } {
  const published: string[][] = [];
  const reloader = new Reloader({
    configPath,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    subscribers: [
      {
        name: 'recorder',
        publish: (build: PublishedBuild) => published.push(hostsOf(build)),
      },
    ],
    logger: recordingLogger(),
  });
  return { reloader, published };
}

test('a config written in place in two parts 0.4 s apart is published only whole', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, configText('old.test'));
  const { reloader, published } = hostRecorder(path);
  try {
    reloader.loadInitial();
    // The first part alone is a valid config with one route; the second adds another.
    writeFileSync(path, configText('first.test'));
    // The scenario itself: the writer pauses 0.4 s between its two parts.
    await new Promise((resolve) => setTimeout(resolve, 400));
    appendFileSync(path, '  - from: https://second.test\n    to: http://127.0.0.1:9001\n');
    await waitFor(async () => published.length > 1, { what: 'the whole file to be published' });
    assert.deepEqual(published, [['old.test'], ['first.test', 'second.test']], 'never the first part alone');
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('a config renamed into place is published at once, without waiting for the settle time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, configText('old.test'));
  const { reloader, published } = hostRecorder(path);
  try {
    reloader.loadInitial();
    writeFileSync(`${path}.tmp`, configText('new.test'));
    renameSync(`${path}.tmp`, path);
    await waitFor(async () => published.length > 1, {
      what: 'the renamed file to be published',
      timeoutMs: 500,
    });
    assert.deepEqual(published[1], ['new.test']);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true });
  }
});

test('files nested 1,000 to 100,000 deep written over the running config are rejected with the line; the last good keeps serving', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'reload-deep-'));
  const deep = (count: number): string => '['.repeat(count) + ']'.repeat(count);
  const files: [name: string, good: string, bad: (count: number) => string, line: number][] = [
    [
      'config.yaml',
      configText('yaml.test'),
      (n) => `${configText('x.test')}idp_request_params:\n  a: ${deep(n)}\n`,
      7 + SIGN_IN_YAML.split('\n').length - 1,
    ],
    [
      'config.json',
      JSON.stringify({
        insecure_server: true,
        address: ':8080',
        ...SIGN_IN,
        routes: [{ from: 'https://json.test', to: 'http://127.0.0.1:9000' }],
      }),
      (n) => `{\n  "insecure_server": true,\n  "idp_request_params": ${deep(n)}\n}`,
      3,
    ],
    [
      'config.toml',
      `insecure_server = true\naddress = ":8080"\n${signInLines('toml')}[[routes]]\nfrom = "https://toml.test"\nto = "http://127.0.0.1:9000"\n`,
      (n) => `insecure_server = true\naddress = ":8080"\nidp_request_params = ${deep(n)}\n`,
      3,
    ],
    [
      'config.properties',
      `insecure_server=true\naddress=:8080\n${signInLines('properties')}routes=[{"from":"https://props.test","to":"http://127.0.0.1:9000"}]\n`,
      (n) =>
        `insecure_server=true\naddress=:8080\nroutes=[{"from":"https://a.test","to":"http://b","policy":${deep(n)}}]\n`,
      3,
    ],
  ];
  try {
    for (const [name, good, bad, line] of files) {
      const path = join(dir, name);
      writeFileSync(path, good);
      const { reloader, store, published } = setup(path);
      try {
        const kept = reloader.loadInitial().snapshot.version;
        for (const [index, count] of [1_000, 10_000, 100_000].entries()) {
          writeFileSync(`${path}.tmp`, bad(count));
          renameSync(`${path}.tmp`, path); // through the watcher, as an editor saves
          await waitFor(async () => reloader.current().failures === index + 1, {
            what: `${name} nested ${count} deep to be rejected`,
          });
          const [problem, ...others] = reloader.current().lastProblems;
          assert.deepEqual(others, [], name);
          assert.match(
            formatProblem(problem ?? { path: '', message: '' }),
            /nested more than 64 levels deep/,
            name,
          );
          assert.equal(problem?.line, line, `${name} at ${count}: ${problem?.message}`);
          assert.equal(store.current()?.version, kept, `${name}: the last good config keeps serving`);
        }
        writeFileSync(path, good.replace(/\.test/, '2.test'));
        await waitFor(async () => published.length === 2, {
          what: `${name}: the next good config to go live`,
        });
      } finally {
        reloader.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true });
  }
});
