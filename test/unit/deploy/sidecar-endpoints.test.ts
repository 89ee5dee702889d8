// A sidecar Envoy in another container (docker-compose.yml) reaches an in-process authorize at
// `authorize_internal_service_url` and the sign-in endpoints at `authenticate_internal_service_url`,
// instead of its own loopback: the options' rules, and where internalEndpoints points ext_authz.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatProblem } from '../../../src/shared/errors.js';
import { internalEndpoints } from '../../../src/translate/internal-endpoints.js';
import type { Config } from '../../../src/config/types.js';
import { base, parse, SECRET_32, valid } from '../config/helpers.js';

const SIDECAR = {
  shared_secret: SECRET_32,
  grpc_address: '0.0.0.0:5443',
  tls_derive: 'portcullis',
  authorize_internal_service_url: 'https://portcullis:5443',
  authenticate_internal_service_url: 'https://portcullis:5444',
};

function endpoints(config: Config): ReturnType<typeof internalEndpoints> {
  return internalEndpoints(config, {
    jwksJson: '{"keys":[]}',
    decisionJwksJson: '{"keys":[]}',
    ownHttp: { host: '0.0.0.0', port: 5444 },
  });
}

test('all-in-one with a sidecar Envoy elsewhere: ext_authz and sign-in go to the internal URLs', () => {
  const internal = endpoints(valid(base(SIDECAR)));
  assert.deepEqual(
    [internal.authorize.host, internal.authorize.port, internal.http.host, internal.http.port],
    ['portcullis', 5443, 'portcullis', 5444],
  );
});

test('without the internal URLs, a listener on every interface is dialled on loopback', () => {
  const { authorize_internal_service_url: _a, authenticate_internal_service_url: _b, ...local } = SIDECAR;
  const internal = endpoints(valid(base(local)));
  assert.deepEqual(
    [internal.authorize.host, internal.authorize.port, internal.http.host, internal.http.port],
    ['127.0.0.1', 5443, '127.0.0.1', 5444],
  );
});

test('authorize_internal_service_url wins over authorize_service_url for a proxy', () => {
  const config = valid(
    base({
      shared_secret: SECRET_32,
      cookie_secret: SECRET_32,
      services: 'proxy',
      tls_derive: 'portcullis',
      authorize_service_url: 'https://authorize.internal:5443',
      authorize_internal_service_url: 'https://authorize-for-envoy:6443',
      authenticate_internal_service_url: 'https://authenticate:5444',
    }),
  );
  assert.deepEqual(
    [endpoints(config).authorize.host, endpoints(config).authorize.port],
    ['authorize-for-envoy', 6443],
  );
});

test('authorize_internal_service_url is an origin, https:// exactly with tls_derive, http:// off loopback only with grpc_insecure', () => {
  const lines = (extra: Record<string, unknown>): string[] =>
    parse(base({ ...SIDECAR, ...extra })).problems.map(formatProblem);
  assert.deepEqual(lines({ authorize_internal_service_url: 'https://portcullis:5443/x' }), [
    'authorize_internal_service_url: must be an origin (scheme, host and port only): https://portcullis:5443',
  ]);
  assert.deepEqual(lines({ authorize_internal_service_url: 'http://portcullis:5443' }), [
    'authorize_internal_service_url: must be https:// with tls_derive set (internal connections use the derived TLS): https://portcullis:5443',
  ]);
  const { tls_derive: _t, authenticate_internal_service_url: _u, ...plain } = SIDECAR;
  const insecure = (extra: Record<string, unknown>): string[] =>
    parse(base({ ...plain, grpc_insecure: true, ...extra })).problems.map(formatProblem);
  assert.deepEqual(insecure({ authorize_internal_service_url: 'http://portcullis:5443' }), []);
  assert.deepEqual(
    parse(
      base({
        ...plain,
        grpc_address: '127.0.0.1:5443',
        authorize_internal_service_url: 'http://portcullis:5443',
      }),
    ).problems.map(formatProblem),
    [
      'authorize_internal_service_url: http://portcullis:5443 is not loopback and would be reached without TLS: set tls_derive, use https:// with certificate_authority, or grpc_insecure: true on a private network',
    ],
  );
});
