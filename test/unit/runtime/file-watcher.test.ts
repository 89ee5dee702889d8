import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FileWatcher } from '../../../src/runtime/file-watcher.js';
import { waitFor } from '../../support/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-watcher-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('a changed file is reported with the bytes that were compared', async () => {
  const path = join(dir, 'config.yaml');
  writeFileSync(path, 'first\n');
  const reports: ReadonlyMap<string, Buffer>[] = [];
  const watcher = new FileWatcher((changed) => reports.push(changed), { settleMs: 10, pollMs: 100 });
  try {
    watcher.watch([path]);
    writeFileSync(`${path}.tmp`, 'second\n');
    renameSync(`${path}.tmp`, path); // an editor's atomic save
    await waitFor(async () => reports.length > 0, { what: 'the change to be reported' });
    assert.equal(reports[0]?.get(path)?.toString(), 'second\n');
    rmSync(path);
    await waitFor(async () => reports.length > 1, { what: 'the removal to be reported' });
    assert.equal(reports[1]?.has(path), false, 'a vanished file is a change without bytes');
  } finally {
    watcher.close();
  }
});

test('a file written in place in two parts 0.4 s apart is reported once, whole, after the settle time', async () => {
  const path = join(dir, 'two-parts.yaml');
  writeFileSync(path, 'old\n');
  const reports: { at: number; bytes: string | undefined }[] = [];
  const settleMs = 1000;
  const watcher = new FileWatcher(
    (changed) => reports.push({ at: performance.now(), bytes: changed.get(path)?.toString() }),
    { settleMs, pollMs: 100 },
  );
  try {
    watcher.watch([path]);
    writeFileSync(path, 'part one\n'); // in place: same inode, truncated and rewritten
    // The scenario itself: the writer pauses 0.4 s between its two parts.
    await new Promise((resolve) => setTimeout(resolve, 400));
    appendFileSync(path, 'part two\n');
    const secondWrite = performance.now();
    await waitFor(async () => reports.length > 0, { what: 'the settled write to be reported' });
    assert.deepEqual(
      reports.map((report) => report.bytes),
      ['part one\npart two\n'],
    );
    assert.ok(
      (reports[0]?.at ?? 0) - secondWrite >= settleMs - 5,
      'not reported before the file had been still for the settle time',
    );
  } finally {
    watcher.close();
  }
});

test('a rename over the file is reported at once, whatever the settle time', async () => {
  const path = join(dir, 'renamed.yaml');
  writeFileSync(path, 'old\n');
  const reports: ReadonlyMap<string, Buffer>[] = [];
  const watcher = new FileWatcher((changed) => reports.push(changed), { settleMs: 60_000, pollMs: 100 });
  try {
    watcher.watch([path]);
    writeFileSync(`${path}.tmp`, 'new\n');
    renameSync(`${path}.tmp`, path);
    await waitFor(async () => reports.length > 0, { what: 'the rename to be reported', timeoutMs: 1000 });
    assert.equal(reports[0]?.get(path)?.toString(), 'new\n');
  } finally {
    watcher.close();
  }
});

test('a file deleted and written again settles like a write in place', async () => {
  const path = join(dir, 'recreated.yaml');
  writeFileSync(path, 'old\n');
  const reports: ReadonlyMap<string, Buffer>[] = [];
  const watcher = new FileWatcher((changed) => reports.push(changed), { settleMs: 300, pollMs: 50 });
  try {
    watcher.watch([path]);
    rmSync(path);
    await waitFor(async () => reports.length > 0, { what: 'the removal to be reported' });
    assert.equal(reports[0]?.has(path), false);
    writeFileSync(path, 'part one\n');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the writer pauses between parts
    appendFileSync(path, 'part two\n');
    await waitFor(async () => reports.length > 1, { what: 'the new file to be reported' });
    assert.equal(reports[1]?.get(path)?.toString(), 'part one\npart two\n');
    assert.equal(reports.length, 2);
  } finally {
    watcher.close();
  }
});
