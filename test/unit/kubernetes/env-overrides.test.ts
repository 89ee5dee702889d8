// Which options the environment overrides in the settings object: only a variable set to a value
// other than the field's, named by option, variable and field; a secret by its Secret key only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envOverrides, overrideMessage } from '../../../src/kubernetes/env-overrides.js';

test('a variable with another value than the field overrides it, named by option, variable and field', () => {
  const overrides = envOverrides(
    { address: ':8443', metrics_address: ':9090', log_level: 'info' },
    { ADDRESS: '127.0.0.1:9443', METRICS_ADDRESS: ':9090', LOG_LEVEL: '', HOME: '/root' },
  );
  assert.deepEqual(overrides, [{ option: 'address', envVar: 'ADDRESS', field: 'spec.address' }]);
  assert.equal(
    overrideMessage(overrides[0]!),
    'address: the environment variable ADDRESS overrides spec.address, which is ignored while the variable is set; unset one of them',
  );
});

test('the same value in another spelling is no override; a field the object leaves unset is none', () => {
  assert.deepEqual(
    envOverrides(
      { insecure_server: true, grpc_insecure: false },
      { INSECURE_SERVER: 'true', GRPC_INSECURE: 'false' },
    ),
    [],
  );
  assert.deepEqual(envOverrides({}, { ADDRESS: ':1' }), []);
});

test('a secret option is named by the Secret key its field reads, never by its value', () => {
  const objectValue = 'from-the-secret-made-at-test-time';
  const envValue = 'from-the-environment-made-at-test-time';
  const overrides = envOverrides({ idp_client_secret: objectValue }, { IDP_CLIENT_SECRET: envValue });
  assert.equal(overrides.length, 1);
  const [override] = overrides;
  assert.equal(override?.option, 'idp_client_secret');
  assert.equal(override?.envVar, 'IDP_CLIENT_SECRET');
  assert.equal(override?.field, 'spec.identityProvider.secret');
  assert.equal(override?.secretKey, 'client_secret');
  const message = overrideMessage(override!);
  assert.match(message, /spec\.identityProvider\.secret \(Secret key client_secret\)/);
  assert.doesNotMatch(`${message}${JSON.stringify(override)}`, /made-at-test-time/);
});
