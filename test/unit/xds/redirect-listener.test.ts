// `http_redirect_addr` compiled (redirect-listener.ts): a second listener, sorted by name beside the
// HTTPS one, whose only route answers 301 with https_redirect (path and query kept by Envoy), the
// client's port stripped, and the HTTPS port named unless it is 443; no ext_authz, no RDS, no
// cluster. Every field is one Envoy's proto declares, and it survives encoding.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { LISTENER_TYPE } from '../../../src/proto/type-urls.js';
import { assertKnownFields, decodeMessage, encodeMessage } from '../../../src/proto/codec.js';
import { HTTP_REDIRECT_LISTENER } from '../../../src/contract/names.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { generateTestCertificate } from '../../support/test-certs.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CERT = generateTestCertificate('app.test');

function listeners(address: string, redirect?: string): { name: string; message: Json }[] {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      address,
      certificate: CERT.certPem,
      certificate_key: CERT.keyPem,
      ...(redirect === undefined ? {} : { http_redirect_addr: redirect }),
      routes: [{ from: 'https://app.test', to: 'http://10.0.0.1:8080' }],
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir);
  return compile(ir)[LISTENER_TYPE].map(({ name, message }) => ({ name, message: message as Json }));
}

test('the redirect listener answers every request with a 301 to HTTPS on the HTTPS port', () => {
  const all = listeners('127.0.0.1:8443', '127.0.0.1:8080');
  assert.deepEqual(
    all.map((listener) => listener.name),
    [HTTP_REDIRECT_LISTENER, 'https-ingress'],
    'sorted by name',
  );
  const redirect = all[0]?.message as Json;
  assertKnownFields('envoy.config.listener.v3.Listener', redirect);
  assert.deepEqual(redirect.address, { socket_address: { address: '127.0.0.1', port_value: 8080 } });
  assert.equal(redirect.listener_filters, undefined);
  const chains = redirect.filter_chains as Json[];
  assert.equal(chains.length, 1);
  assert.equal(chains[0]?.transport_socket, undefined, 'plain HTTP');
  const hcm = chains[0]?.filters[0].typed_config as Json;
  assert.equal(hcm.rds, undefined, 'an inline route table');
  assert.equal(hcm.strip_any_host_port, true);
  assert.deepEqual(
    hcm.http_filters.map((filter: Json) => filter.name),
    ['envoy.filters.http.router'],
    'no ext_authz, no strip filters: nothing is forwarded',
  );
  const hosts = hcm.route_config.virtual_hosts as Json[];
  assert.deepEqual(hosts.length, 1);
  assert.deepEqual(hosts[0]?.domains, ['*']);
  assert.deepEqual(hosts[0]?.routes, [
    {
      match: { prefix: '/' },
      redirect: { https_redirect: true, port_redirect: 8443, response_code: 'MOVED_PERMANENTLY' },
    },
  ]);
  const decoded = decodeMessage(
    'envoy.config.listener.v3.Listener',
    encodeMessage('envoy.config.listener.v3.Listener', redirect),
  ) as Json;
  const decodedHcm = decoded.filter_chains[0].filters[0].typed_config;
  assert.equal(decodedHcm.strip_any_host_port, true, 'the field survives encoding');
  assert.equal(decodedHcm.route_config.virtual_hosts[0].routes[0].redirect.https_redirect, true);
});

test('on 443 the redirect names no port; without http_redirect_addr there is no second listener', () => {
  const redirect = listeners(':443', ':80')[0]?.message as Json;
  const route = redirect.filter_chains[0].filters[0].typed_config.route_config.virtual_hosts[0].routes[0];
  assert.deepEqual(route.redirect, { https_redirect: true, response_code: 'MOVED_PERMANENTLY' });
  assert.deepEqual(redirect.address, { socket_address: { address: '0.0.0.0', port_value: 80 } });
  assert.deepEqual(
    listeners(':443').map((listener) => listener.name),
    ['https-ingress'],
  );
});
