// The reload loop fed by a config source that pushes documents (the Kubernetes settings
// resource) rather than a file: the same build in the worker, the last good build kept on error,
// the problems handed back with their key paths, and `*_file` keys refused (no file is read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reloader } from '../../../src/runtime/reloader.js';
import { snapshotSubscriber } from '../../../src/runtime/subscribers.js';
import { SnapshotStore } from '../../../src/xds/snapshot/snapshot-store.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { ValidationError } from '../../../src/shared/errors.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

function documentFor(host: string): Record<string, unknown> {
  return {
    insecure_server: true,
    address: ':8080',
    ...SIGN_IN,
    routes: [{ from: `https://${host}`, to: 'http://127.0.0.1:9000' }],
  };
}

function hostsOf(reloader: Reloader): string[] {
  return (reloader.lastGoodBuild()?.ir.virtualHosts ?? []).flatMap((host) => host.domains);
}

for (const worker of [true, false]) {
  test(`pushed documents build ${worker ? 'in the worker' : 'in this thread'}; a bad one keeps the last good`, async () => {
    const store = new SnapshotStore();
    const logger = recordingLogger();
    const reloader = new Reloader({
      configPath: 'kubernetes: Portcullis global',
      env: {},
      document: { document: documentFor('one.test'), env: {} },
      translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
      subscribers: [snapshotSubscriber(store)],
      logger,
      ...(worker ? { worker: true as const } : {}),
    });
    try {
      const first = await reloader.start();
      assert.deepEqual(first.filesRead, []);
      const firstVersion = first.snapshot.version;
      assert.ok(hostsOf(reloader).includes('one.test'));

      const good = await reloader.pushDocument({ document: documentFor('two.test'), env: {} });
      assert.equal(good?.ok, true);
      assert.notEqual(store.current()?.version, firstVersion);
      assert.ok(hostsOf(reloader).includes('two.test'));
      const kept = store.current()?.version;

      const bad = await reloader.pushDocument({
        document: { ...documentFor('three.test'), idp_provider_url: 'not a url' },
        env: {},
      });
      assert.equal(bad?.ok, false);
      assert.ok(bad !== undefined && !bad.ok);
      assert.deepEqual(
        bad.problems.map((problem) => problem.path),
        ['idp_provider_url'],
      );
      assert.equal(store.current()?.version, kept, 'the last good build keeps serving');
      assert.equal(reloader.current().failures, 1);
      const line = logger.records.find((record) => record.msg?.startsWith('config reload rejected'));
      assert.equal((line?.obj as { config?: string } | undefined)?.config, 'kubernetes: Portcullis global');

      // The environment travels with the document and still wins over it.
      const withEnv = await reloader.pushDocument({
        document: documentFor('four.test'),
        env: { IDP_PROVIDER_URL: 'also not a url' },
      });
      assert.ok(withEnv !== undefined && !withEnv.ok);
      assert.deepEqual(
        withEnv.problems.map((problem) => problem.path),
        ['IDP_PROVIDER_URL'],
      );

      const reads = await reloader.pushDocument({
        document: { ...documentFor('five.test'), signing_key_file: '/etc/passwd' },
        env: {},
      });
      assert.ok(reads !== undefined && !reads.ok);
      assert.deepEqual(
        reads.problems.map((problem) => problem.path),
        ['signing_key_file'],
      );
      assert.deepEqual(reads.filesRead, []);
    } finally {
      reloader.close();
    }
  });
}

test('an invalid first pushed document is refused with its problems, naming the source', async () => {
  const reloader = new Reloader({
    configPath: 'kubernetes: Portcullis global',
    env: {},
    document: { document: { ...documentFor('one.test'), idp_provider_url: 'nope' }, env: {} },
    translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' },
    logger: recordingLogger(),
    worker: true,
  });
  try {
    await assert.rejects(reloader.start(), (err: unknown) => {
      assert.ok(err instanceof ValidationError);
      assert.deepEqual(
        err.problems.map((problem) => problem.path),
        ['idp_provider_url'],
      );
      assert.match(err.message, /kubernetes: Portcullis global/);
      return true;
    });
  } finally {
    reloader.close();
  }
});
