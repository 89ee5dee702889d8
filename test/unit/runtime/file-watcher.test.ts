import assert from 'node:assert/strict';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  const watcher = new FileWatcher((changed) => reports.push(changed), { debounceMs: 10, pollMs: 100 });
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
