// A list-and-watch whose API server cannot be reached keeps retrying with a capped, doubling
// backoff and says why it is not synced; a Secret that could not be
// listed is "unknown", never "missing".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { FollowedList } from '../../../src/kubernetes/watch/followed-list.js';
import { SecretWatch } from '../../../src/kubernetes/watch/secret-watch.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { freePort } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';

/** A client configuration naming a loopback port where nothing listens. */
async function unreachable(): Promise<KubeConfig> {
  const config = new KubeConfig();
  const server = `https://127.0.0.1:${await freePort()}`;
  config.loadFromOptions({
    clusters: [{ name: 'none', server, skipTLSVerify: true }],
    users: [{ name: 'none', token: 'unused' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  return config;
}

test('an unreachable API server: retries back off 20, 40, 80, 80 ms and it says why it is not synced', async () => {
  const kubeConfig = await unreachable();
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const logger = recordingLogger();
  const list = new FollowedList<V1Secret>({
    kubeConfig,
    path: '/api/v1/namespaces/ns/secrets',
    list: () => core.listNamespacedSecret({ namespace: 'ns', fieldSelector: 'metadata.name=x' }),
    fieldSelector: 'metadata.name=x',
    what: 'Secret ns/x',
    onChange: () => undefined,
    logger,
    backoff: { minMs: 20, maxMs: 80 },
  });
  await list.start();
  assert.equal(list.synced(), false);
  const retries = (): number[] =>
    logger.records
      .filter((record) => record.msg === 'watching Secret ns/x failed; retrying')
      .map((record) => (record.obj as { retryInMs: number }).retryInMs);
  await waitFor(async () => retries().length >= 4, { what: 'four retries' });
  assert.deepEqual(retries().slice(0, 4), [20, 40, 80, 80]);
  assert.match(list.error() ?? '', /ECONNREFUSED|connect/);
  await list.stop();
});

test('a Secret that could not be listed is unknown (with the reason), not missing', async () => {
  const kubeConfig = await unreachable();
  const watch = new SecretWatch({
    kubeConfig,
    core: kubeConfig.makeApiClient(CoreV1Api),
    logger: recordingLogger(),
    onChange: () => undefined,
  });
  try {
    await watch.follow([{ namespace: 'ns', name: 'idp' }]);
    const { secrets, unknown } = watch.current();
    assert.equal(secrets.size, 0);
    assert.equal(unknown.length, 1);
    assert.match(unknown[0] ?? '', /^Secret ns\/idp could not be read: /);
  } finally {
    await watch.stop();
  }
});
