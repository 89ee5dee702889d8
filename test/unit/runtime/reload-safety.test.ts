// Issue 33 items 13 and 15 without Envoy: a writer holding the config open is waited for (from
// /proc), with a bound and a longer settle where /proc cannot tell; a reload that opens a
// protected path warns; Envoy's verdict decides whether a published build counts, and a NACK
// rolls every subscriber back to the last build Envoy took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { FileWatcher } from '../../../src/runtime/file-watcher.js';
import { isWriteMode, openWriters } from '../../../src/runtime/open-writers.js';
import { Reloader } from '../../../src/runtime/reloader.js';
import { EnvoyVerdicts, type EnvoyVerdict } from '../../../src/xds/publish/envoy-verdict.js';
import type { GoodBuild } from '../../../src/runtime/build-pipeline.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { waitFor } from '../../support/wait.js';
import { LISTENER_TYPE } from '../../../src/proto/type-urls.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function tempFile(name: string, content: string): { path: string; done: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'reload-safety-'));
  const path = join(dir, name);
  writeFileSync(path, content);
  return { path, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test('openWriters finds this process while it holds the file open for writing, and only then', () => {
  const { path, done } = tempFile('w.yaml', 'x\n');
  try {
    assert.deepEqual(openWriters(path), [], 'nobody has it open');
    const reader = openSync(path, 'r');
    assert.deepEqual(openWriters(path), [], 'a reader is no writer');
    closeSync(reader);
    const writer = openSync(path, 'r+');
    assert.ok(openWriters(path)?.includes(process.pid), 'O_RDWR is a writer');
    closeSync(writer);
    const appender = openSync(path, 'a');
    assert.ok(openWriters(path)?.includes(process.pid), 'O_WRONLY|O_APPEND is a writer');
    closeSync(appender);
    assert.deepEqual(openWriters(path), []);
    assert.equal(openWriters(path, join(tmpdir(), 'no-such-proc')), undefined, 'no /proc: cannot tell');
    assert.equal(isWriteMode('pos:\t0\nflags:\t0100000\nmnt_id:\t1\n'), false);
    assert.equal(isWriteMode('pos:\t0\nflags:\t02100001\n'), true);
  } finally {
    done();
  }
});

test('a writer that pauses longer than the settle time with the file open is waited for; its half is never reported', async () => {
  const { path, done } = tempFile('half.yaml', 'old\n');
  const reports: (string | undefined)[] = [];
  const settleMs = 30;
  const watcher = new FileWatcher((changed) => reports.push(changed.get(path)?.toString()), {
    settleMs,
    pollMs: 50,
  });
  try {
    watcher.watch([path]);
    const fd = openSync(path, 'w'); // in place: truncated, same inode
    writeSync(fd, 'first half\n');
    await sleep(settleMs * 10); // the pause, ten times the settle time
    assert.deepEqual(reports, [], 'nothing reported while the writer holds the file open');
    writeSync(fd, 'second half\n');
    closeSync(fd);
    await waitFor(async () => reports.length > 0, { what: 'the whole file to be reported' });
    assert.deepEqual(reports, ['first half\nsecond half\n']);
  } finally {
    watcher.close();
    done();
  }
});

test('another process that writes half, pauses with the file open, then the rest: only the whole is reported', async () => {
  const { path, done } = tempFile('child.yaml', 'old\n');
  const reports: (string | undefined)[] = [];
  const watcher = new FileWatcher((changed) => reports.push(changed.get(path)?.toString()), {
    settleMs: 30,
    pollMs: 50,
  });
  try {
    watcher.watch([path]);
    // A shell holding the file on descriptor 3: half, a 1 s pause, the rest, then close.
    const writer = spawn('sh', [
      '-c',
      'exec 3>"$1"; printf "half\\n" >&3; sleep 1; printf "rest\\n" >&3',
      'sh',
      path,
    ]);
    await once(writer, 'exit');
    await waitFor(async () => reports.length > 0, { what: 'the whole file to be reported' });
    assert.deepEqual(reports, ['half\nrest\n']);
  } finally {
    watcher.close();
    done();
  }
});

test('a writer that never closes is waited for up to writerWaitMs, then the file loads with a warning', async () => {
  const { path, done } = tempFile('stuck.yaml', 'old\n');
  const logger = recordingLogger();
  const reports: (string | undefined)[] = [];
  const watcher = new FileWatcher((changed) => reports.push(changed.get(path)?.toString()), {
    settleMs: 20,
    pollMs: 50,
    writerWaitMs: 300,
    logger,
  });
  const fd = openSync(path, 'w');
  try {
    watcher.watch([path]);
    writeSync(fd, 'new\n');
    const wrote = performance.now();
    await waitFor(async () => reports.length > 0, { what: 'the bounded wait to end' });
    assert.ok(performance.now() - wrote >= 300, 'held for the whole bound');
    assert.deepEqual(reports, ['new\n']);
    assert.ok(
      logger.records.some((r) => r.level === 'warn' && (r.msg ?? '').includes('still open for writing')),
    );
  } finally {
    closeSync(fd);
    watcher.close();
    done();
  }
});

test('where no process table can be read, an in-place change settles five times longer', async () => {
  const { path, done } = tempFile('blind.yaml', 'old\n');
  const reports: number[] = [];
  const watcher = new FileWatcher(() => reports.push(performance.now()), {
    settleMs: 40,
    pollMs: 50,
    openWriters: () => undefined,
  });
  try {
    watcher.watch([path]);
    writeFileSync(path, 'new\n');
    const wrote = performance.now();
    await waitFor(async () => reports.length > 0, { what: 'the change to be reported' });
    assert.ok((reports[0] ?? 0) - wrote >= 40 * 5 - 5, 'not before 5 x settleMs');
  } finally {
    watcher.close();
    done();
  }
});

function routesConfig(routes: Record<string, unknown>[]): string {
  return stringify({ ...SIGN_IN, insecure_server: true, address: ':8080', routes });
}
const ADMIN = {
  from: 'https://app.test',
  prefix: '/admin',
  to: 'http://127.0.0.1:9000',
  allowed_users: ['alice@example.test'],
};
const ROOT_PUBLIC = {
  from: 'https://app.test',
  prefix: '/',
  to: 'http://127.0.0.1:9000',
  allow_public_unauthenticated_access: true,
};

test('a reload that makes a protected path public logs a warning naming the host and path', () => {
  const { path, done } = tempFile('config.yaml', routesConfig([ADMIN, ROOT_PUBLIC]));
  const logger = recordingLogger();
  const reloader = new Reloader({
    configPath: path,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    logger,
  });
  try {
    reloader.loadInitial();
    writeFileSync(path, routesConfig([ADMIN, { ...ROOT_PUBLIC, set_response_headers: { 'X-A': 'b' } }]));
    assert.equal(reloader.reload().ok, true);
    const opens = (): string[] =>
      logger.records
        .filter((r) => r.level === 'warn' && (r.msg ?? '').includes('protected path public'))
        .map((r) => r.msg ?? '');
    assert.deepEqual(opens(), [], 'nothing opened');
    writeFileSync(path, routesConfig([ROOT_PUBLIC])); // the first half of the file
    assert.equal(reloader.reload().ok, true);
    assert.equal(opens().length, 1);
    assert.match(opens()[0] ?? '', /app\.test prefix \/admin/);
    writeFileSync(
      path,
      routesConfig([{ ...ADMIN, allowed_users: undefined, allow_public_unauthenticated_access: true }]),
    );
    reloader.reload();
    assert.equal(opens().length, 1, 'a path that was already public does not warn again');
  } finally {
    reloader.close();
    done();
  }
});

test("Envoy's verdict decides: a NACKed build is a failed reload and every subscriber gets the last taken build back", async () => {
  const { path, done } = tempFile('config.yaml', routesConfig([ADMIN]));
  const logger = recordingLogger();
  const got: string[] = [];
  const outcomes: boolean[] = [];
  let answer: (verdict: EnvoyVerdict) => void = () => undefined;
  const reloader = new Reloader({
    configPath: path,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    logger,
    subscribers: [{ name: 'authorize', publish: (build: GoodBuild) => got.push(build.snapshot.version) }],
    envoyVerdict: () => new Promise((resolve) => (answer = resolve)),
    onReload: (result) => outcomes.push(result.ok),
  });
  try {
    const first = reloader.loadInitial().snapshot.version;
    writeFileSync(path, routesConfig([{ ...ADMIN, set_response_headers: { 'X-Version': '2' } }]));
    const second = reloader.reloadInBackground();
    await waitFor(async () => got.length === 2, { what: 'the second build to be published' });
    answer({ kind: 'rejected', nodeId: 'envoy-1', type: 'routes', errorDetail: 'no, thanks' });
    const result = await second;
    assert.equal(result?.ok, false);
    assert.deepEqual(got.slice(2), [first], 'the authorization state went back to the taken build');
    assert.equal(reloader.lastGoodBuild()?.snapshot.version, first);
    assert.equal(reloader.current().failures, 1);
    assert.deepEqual(outcomes, [true, false]);
    const logged = logger.records.find(
      (r) => r.level === 'error' && JSON.stringify(r).includes('no, thanks'),
    );
    assert.ok(logged, "the failure carries Envoy's error_detail");
    writeFileSync(path, routesConfig([{ ...ADMIN, set_response_headers: { 'X-Version': '3' } }]));
    const third = reloader.reloadInBackground();
    await waitFor(async () => got.length === 4, { what: 'the third build to be published' });
    answer({ kind: 'taken', envoys: 1 });
    assert.equal((await third)?.ok, true);
    assert.deepEqual(outcomes, [true, false, true]);
  } finally {
    reloader.close();
    done();
  }
});

test('EnvoyVerdicts: no Envoy decides at once; a NACK rejects; a newer build supersedes; ACKs of every type take', async () => {
  const verdicts = new EnvoyVerdicts({ timeoutMs: 5000 });
  const snapshot = (version: string) =>
    ({ version, typeVersions: { [LISTENER_TYPE]: version } }) as unknown as Parameters<
      EnvoyVerdicts['verdictOn']
    >[0];
  assert.deepEqual(await verdicts.verdictOn(snapshot('a')), { kind: 'no-envoy' });
  verdicts.observe({ kind: 'pending', stream: 1, nodeId: 'n', type: LISTENER_TYPE });
  const b = verdicts.verdictOn(snapshot('b'));
  const c = verdicts.verdictOn(snapshot('c'));
  assert.deepEqual(await b, { kind: 'superseded' });
  verdicts.observe({ kind: 'nacked', stream: 1, nodeId: 'n', type: LISTENER_TYPE, errorDetail: 'bad' });
  assert.deepEqual(await c, { kind: 'rejected', nodeId: 'n', type: 'listeners', errorDetail: 'bad' });
  const d = verdicts.verdictOn(snapshot('d'));
  verdicts.observe({ kind: 'acked', stream: 1, nodeId: 'n', type: LISTENER_TYPE, version: 'd' });
  assert.deepEqual(await d, { kind: 'taken', envoys: 1 });
  const short = new EnvoyVerdicts({ timeoutMs: 30 });
  short.observe({ kind: 'pending', stream: 1, nodeId: 'n', type: LISTENER_TYPE });
  const alive = setTimeout(() => undefined, 5000); // the verdict's own timer does not hold the process
  assert.deepEqual(await short.verdictOn(snapshot('e')), { kind: 'unconfirmed', waitingFor: 1, afterMs: 30 });
  clearTimeout(alive);
});
