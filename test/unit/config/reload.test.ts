// Bad input on reload: a broken secret file, a malformed TOML file, a removed option. Each is
// rejected with its key named, and the last good config keeps serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reloader } from '../../../src/runtime/reloader.js';
import { snapshotSubscriber } from '../../../src/runtime/subscribers.js';
import { SnapshotStore } from '../../../src/xds/snapshot/snapshot-store.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { signInLines } from '../../support/sign-in-config.js';

test('an invalid reload keeps the last good config and names the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-config-reload-'));
  const configPath = join(dir, 'config.toml');
  const secretPath = join(dir, 'shared_secret');
  const good = (host: string): string =>
    `insecure_server = true\naddress = ":8080"\nshared_secret_file = "${secretPath}"\n${signInLines('toml')}[[routes]]\nfrom = "https://${host}"\nto = "http://10.0.0.1:80"\n`;
  writeFileSync(secretPath, `${Buffer.alloc(32, 3).toString('base64')}\n`);
  writeFileSync(configPath, good('a.example.com'));
  const store = new SnapshotStore();
  const logger = recordingLogger();
  const reloader = new Reloader({
    configPath,
    env: {},
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    subscribers: [snapshotSubscriber(store)],
    logger,
  });
  try {
    const first = reloader.loadInitial();
    const version = first.snapshot.version;
    const rejected = (why: string, path: string, text: RegExp): void => {
      const result = reloader.reload();
      assert.equal(result.ok, false, why);
      if (!result.ok) {
        assert.ok(
          result.problems.some((problem) => problem.path === path && text.test(formatProblem(problem))),
          `${why}: ${result.problems.map(formatProblem).join('\n')}`,
        );
      }
      assert.equal(reloader.current().activeVersion, version, `${why}: the last good config keeps serving`);
    };

    writeFileSync(secretPath, '');
    rejected('an emptied secret file', 'shared_secret_file', /is empty/);
    rmSync(secretPath);
    rejected('a deleted secret file', 'shared_secret_file', /ENOENT \(no such file\)/);
    writeFileSync(secretPath, Buffer.alloc(32, 3).toString('base64'));
    writeFileSync(configPath, 'insecure_server = true\naddress = \n');
    rejected('malformed TOML', '', /config\.toml: malformed TOML: .*\(line 2\)/);
    writeFileSync(configPath, `headers = { X-A = "b" }\n${good('a.example.com')}`);
    rejected('a removed option', 'headers', /use set_response_headers/);
    assert.ok(
      logger.records.some(
        (record) => record.level === 'error' && /last good config keeps serving/.test(record.msg ?? ''),
      ),
    );

    writeFileSync(configPath, good('b.example.com'));
    const fixed = reloader.reload();
    assert.equal(fixed.ok, true);
    assert.notEqual(reloader.current().activeVersion, version);
  } finally {
    reloader.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
