// The ext_authz timeout Envoy is given (issue 23, item 6): `authorize_timeout`, 1 s by default and
// when 0; `grpc_client_timeout` no longer stretches it. The real-Envoy behaviour is tested in
// test/integration/authorize-timeout.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { internalEndpoints } from '../../../src/translate/internal-endpoints.js';
import { parse } from '../config/helpers.js';

function timeoutFor(document: Record<string, unknown>): number {
  const { config } = parse({ insecure_server: true, ...document });
  assert.ok(config);
  return internalEndpoints(config, {
    jwksJson: '{"keys":[]}',
    decisionJwksJson: '{"keys":[]}',
    ownHttp: { host: '127.0.0.1', port: 0 },
  }).authorizeTimeoutMs;
}

test('authorize_timeout bounds ext_authz: 1 s by default, the value when set, the default for 0s', () => {
  assert.equal(timeoutFor({}), 1000);
  assert.equal(timeoutFor({ authorize_timeout: '250ms' }), 250);
  assert.equal(timeoutFor({ authorize_timeout: '0s' }), 1000);
  assert.equal(timeoutFor({ grpc_client_timeout: '30s' }), 1000, 'grpc_client_timeout does not feed it');
});
