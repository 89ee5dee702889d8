// The composition root reads `services`: which parts a process starts, and that a lone service is
// refused (issue 25) rather than quietly started as all-in-one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { runnableParts, servicePartsOf } from '../../../src/cmd/services.js';
import { PortcullisError } from '../../../src/shared/errors.js';

function config(): NonNullable<ReturnType<typeof parseConfig>['config']> {
  const parsed = parseConfig({
    document: { insecure_server: true, address: ':8080', routes: [] },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  return parsed.config;
}

test('services: all runs every part', () => {
  assert.deepEqual(runnableParts(config()), {
    authorize: true,
    proxy: true,
    databroker: true,
    authenticate: true,
  });
});

test('a list names exactly the parts to run', () => {
  assert.deepEqual(servicePartsOf(['authorize', 'databroker']), {
    authorize: true,
    proxy: false,
    databroker: true,
    authenticate: false,
  });
});

test('a lone service is refused with a clear error naming services and the issue', () => {
  const split = { ...config(), services: ['authorize'] as const, all_in_one: false };
  assert.throws(
    () => runnableParts(split),
    (err: unknown) =>
      err instanceof PortcullisError &&
      err.code === 'SERVICES_NOT_SUPPORTED' &&
      /services: authorize/.test(err.message) &&
      /issue 25/.test(err.message),
  );
});
