// Issue 37 item 4: settings that used to do less than they said are refused by parsing (and so by
// `validate`), each with a message naming the key: idp_request_params naming a parameter the
// sign-in flow sets itself, idp_provider: hosted, and health_check_addr.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { FLOW_REQUEST_PARAMS } from '../../../src/shared/flow-params.js';
import { signInLines } from '../../support/sign-in-config.js';
import { assertProblem, base, problems, valid } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-refused-settings-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Loads `text` as a config file named `name` through the real format parsers; the problems. */
function loadProblems(name: string, text: string): string[] {
  const path = join(dir, name);
  writeFileSync(path, text);
  const result = loadConfigFile(path, {});
  assert.equal(result.config, undefined, 'expected problems');
  return result.problems.map(formatProblem);
}

const ROUTE_PROPERTIES = 'routes=[{"from":"https://app.example.com","to":"http://10.0.0.1:8080"}]\n';

test('idp_request_params naming a flow parameter is an error at idp_request_params.<name>', () => {
  for (const name of FLOW_REQUEST_PARAMS) {
    const list = problems(base({ idp_request_params: { prompt: 'login', [name]: 'x' } }));
    assert.equal(list.length, 1, list.join('\n'));
    assertProblem(list, `idp_request_params.${name}`, 'is set by the sign-in flow itself');
    assertProblem(list, `idp_request_params.${name}`, 'remove it');
  }
  assertProblem(
    problems(base({ idp_request_params: { scope: 'openid groups' } })),
    'idp_request_params.scope',
    'use idp_scopes for the scopes',
  );
  assertProblem(
    problems(base({ idp_request_params: { client_id: 'other' } })),
    'idp_request_params.client_id',
    'use idp_client_id',
  );
  // Other parameters, and differently cased names (the parameters are case-sensitive), still pass.
  assert.deepEqual(valid(base({ idp_request_params: { prompt: 'login', State: 'x' } })).idp_request_params, {
    prompt: 'login',
    State: 'x',
  });
});

test('the other spellings of idp_request_params name the spelling that was used', () => {
  assertProblem(
    problems(base({ ipd_request_params: { nonce: 'n' } })),
    'ipd_request_params.nonce',
    'is set by the sign-in flow itself',
  );
  assertProblem(
    problems(base(), { IDP_REQUEST_PARAMS: '{"state":"fixed"}' }),
    'IDP_REQUEST_PARAMS.state',
    'is set by the sign-in flow itself',
  );
  assertProblem(
    loadProblems(
      'params.properties',
      `insecure_server=true\naddress=:8080\n${signInLines('properties')}idp_request_params.redirect_uri=https://evil.example/cb\n${ROUTE_PROPERTIES}`,
    ),
    'idp_request_params.redirect_uri',
    'authenticate_service_url with authenticate_callback_path',
  );
});

test('idp_provider: hosted says there is no hosted service and what to set instead', () => {
  const expected =
    'is refused: there is no hosted authenticate service (Portcullis signs users in itself); set idp_provider to your identity provider';
  for (const value of ['hosted', ' Hosted ']) {
    const list = problems(base({ idp_provider: value }));
    assert.equal(list.length, 1, list.join('\n'));
    assertProblem(list, 'idp_provider', expected);
    assertProblem(list, 'idp_provider', 'authenticate_service_url to the public URL');
  }
  assertProblem(problems(base(), { IDP_PROVIDER: 'hosted' }), 'IDP_PROVIDER', expected);
  // Other unknown names keep the generic message with its suggestion.
  assertProblem(problems(base({ idp_provider: 'gogle' })), 'idp_provider', 'is not one of oidc, google');
  // An inherited property name is not a refused value.
  assertProblem(problems(base({ idp_provider: 'constructor' })), 'idp_provider', 'is not one of');
});

test('health_check_addr is refused, naming where health is served instead', () => {
  const expected =
    'is not supported by Portcullis: health is served on metrics_address (`/healthz`: alive, `/readyz`: ready) and as the gRPC health service (grpc.health.v1) on grpc_address; set metrics_address instead; remove it';
  assert.deepEqual(problems(base({ health_check_addr: ':8081' })), [`health_check_addr: ${expected}`]);
  assert.deepEqual(problems(base(), { HEALTH_CHECK_ADDR: ':8081' }), [`HEALTH_CHECK_ADDR: ${expected}`]);
  assertProblem(
    loadProblems('health.yaml', `insecure_server: true\naddress: ":8080"\nhealth_check_addr: ":8081"\n`),
    'health_check_addr',
    'set metrics_address instead',
  );
  // What it names instead works: metrics_address is an option of its own.
  assert.equal(valid(base({ metrics_address: '127.0.0.1:9090' })).metrics_address, '127.0.0.1:9090');
});

test('the environment form of a peer option that would open access is refused too', () => {
  assertProblem(
    problems(base(), { DOWNSTREAM_MTLS: '{"ca":"x"}' }),
    'DOWNSTREAM_MTLS',
    'ignoring it would open access',
  );
});
