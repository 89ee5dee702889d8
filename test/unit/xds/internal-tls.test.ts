// The ext_authz cluster over tls_derive: with IRInternal.authorize.tls the compiled cluster dials
// Portcullis's Check over TLS (derived CA, SNI and SAN on the tls_derive name), every field known to
// Envoy's protos; without it the cluster is unchanged (the golden files pin that).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authorizeCluster } from '../../../src/xds/compile/ext-authz.js';
import { assertKnownFields } from '../../../src/proto/codec.js';
import type { IRInternal } from '../../../src/ir/types.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const internal: IRInternal = {
  authorize: { host: 'authorize.internal', port: 5443 },
  authorizeTimeoutMs: 10_000,
  jwksJson: '{"keys":[]}',
  decisionJwksJson: '{"keys":[]}',
  http: { host: '127.0.0.1', port: 5080 },
};

test('without tls the ext_authz cluster has no transport socket', () => {
  const cluster = authorizeCluster(internal);
  assert.equal('transport_socket' in cluster, false);
  assertKnownFields('envoy.config.cluster.v3.Cluster', cluster);
});

test('with tls the ext_authz cluster verifies the derived CA and name, whatever host it dials', () => {
  const tls = { caPem: CA, serverName: 'portcullis.internal' };
  const cluster = authorizeCluster({ ...internal, authorize: { ...internal.authorize, tls } });
  assertKnownFields('envoy.config.cluster.v3.Cluster', cluster);
  const { transport_socket: socket, ...rest } = cluster as Record<string, unknown>;
  assert.deepEqual(rest, authorizeCluster(internal), 'nothing else changes');
  const context = (socket as { typed_config: Record<string, unknown> }).typed_config;
  assert.equal(context['sni'], 'portcullis.internal');
  assert.deepEqual(context['common_tls_context'], {
    tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
    alpn_protocols: ['h2'],
    validation_context: {
      trusted_ca: { inline_string: CA },
      match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'portcullis.internal' } }],
    },
  });
});
