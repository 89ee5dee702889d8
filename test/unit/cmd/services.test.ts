// The composition root reads `services`: which parts a process starts, and the `service` label of
// its logs and metrics (spec section 9, 0.8.0).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servicePartsOf } from '../../../src/cmd/services.js';
import { serviceLabel } from '../../../src/shared/service-names.js';
import { SERVICE_NAMES } from '../../../src/config/types.js';

test('every service runs every part', () => {
  assert.deepEqual(servicePartsOf(SERVICE_NAMES), {
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

test('the service label is portcullis all-in-one and portcullis-<service> when split', () => {
  assert.equal(serviceLabel(SERVICE_NAMES), 'portcullis');
  assert.equal(serviceLabel(['authorize']), 'portcullis-authorize');
  assert.equal(serviceLabel(['databroker']), 'portcullis-databroker');
  assert.equal(serviceLabel(['authenticate', 'proxy']), 'portcullis-authenticate-proxy');
});
