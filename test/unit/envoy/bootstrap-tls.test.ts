// ADS over tls_derive in the bootstrap: the xds cluster dials TLS trusting only the derived CA,
// with SNI and a DNS SAN match on the tls_derive name; without tls the cluster has no transport
// socket (plaintext, as before).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildBootstrap } from '../../../src/envoy/bootstrap.js';
import { PortcullisError } from '../../../src/shared/errors.js';
import { TEST_GRPC_CREDENTIAL } from '../../support/grpc-credential.js';

const ads = { address: '10.0.0.5', port: 5443, credential: TEST_GRPC_CREDENTIAL } as const;
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

function xdsCluster(options: Parameters<typeof buildBootstrap>[0]): Record<string, unknown> {
  const clusters = (buildBootstrap(options)['static_resources'] as { clusters: Record<string, unknown>[] })
    .clusters;
  assert.equal(clusters.length, 1);
  return clusters[0] as Record<string, unknown>;
}

test('without ads.tls the xds cluster is plaintext (no transport socket)', () => {
  assert.equal('transport_socket' in xdsCluster({ ads }), false);
});

test('with ads.tls the xds cluster verifies the derived CA and the tls_derive name, offering h2', () => {
  const cluster = xdsCluster({ ads: { ...ads, tls: { caPem: CA, serverName: 'portcullis.internal' } } });
  assert.deepEqual(cluster['transport_socket'], {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      common_tls_context: {
        tls_params: { tls_minimum_protocol_version: 'TLSv1_2' },
        alpn_protocols: ['h2'],
        validation_context: {
          trusted_ca: { inline_string: CA },
          match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'portcullis.internal' } }],
        },
      },
      sni: 'portcullis.internal',
    },
  });
});

test('ads.tls without a name or a PEM CA is refused', () => {
  for (const tls of [
    { caPem: CA, serverName: '' },
    { caPem: 'not a certificate', serverName: 'portcullis.internal' },
  ]) {
    assert.throws(
      () => buildBootstrap({ ads: { ...ads, tls } }),
      (err: unknown) => err instanceof PortcullisError && /ads\.tls/.test(err.message),
    );
  }
});
