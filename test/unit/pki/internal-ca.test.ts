// `certificate_authority` without `tls_derive` (a TLS-terminating load balancer or mesh in front of
// each service): what internal grpc-js clients trust (grpc/internal-client.ts), the TLS Envoy's
// ext_authz and sign-in clusters get (translate/internal-endpoints.ts), and the dry run showing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseYaml } from 'yaml';
import { runCompile } from '../../../src/cmd/compile-command.js';
import type { Config } from '../../../src/config/types.js';
import { AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER } from '../../../src/contract/names.js';
import { internalEndpoints } from '../../../src/translate/internal-endpoints.js';
import { internalClient, internalTrust } from '../../../src/grpc/internal-client.js';
import { internalChannelCredentials } from '../../../src/grpc/internal-grpc.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { base, CERT_PEM, parse, SECRET_32, valid } from '../config/helpers.js';

const DERIVED = { caPem: 'derived-ca', certPem: 'c', keyPem: 'k', serverName: 'portcullis.internal' };

/** A proxy on its own, reaching authorize and authenticate through https URLs and the CA. */
const PROXY = {
  shared_secret: SECRET_32,
  cookie_secret: SECRET_32,
  services: 'proxy',
  certificate_authority: CERT_PEM,
  authorize_service_url: 'https://authorize.internal:5443',
  authenticate_internal_service_url: 'https://authenticate.internal:5444',
};

function endpoints(
  config: Config,
  tls?: { caPem: string; serverName: string },
): ReturnType<typeof internalEndpoints> {
  return internalEndpoints(config, {
    jwksJson: '{"keys":[]}',
    decisionJwksJson: '{"keys":[]}',
    ownHttp: { host: '127.0.0.1', port: 5444 },
    ...(tls === undefined ? {} : { tls }),
  });
}

test('grpc-js trust: the derived CA and name, else the CA for https:// (the host checked), else insecure', () => {
  const https = new URL('https://databroker.internal:5453');
  const http = new URL('http://127.0.0.1:5453');
  assert.deepEqual(internalTrust(https, DERIVED, CERT_PEM), {
    caPem: 'derived-ca',
    serverName: 'portcullis.internal',
  });
  assert.deepEqual(internalTrust(https, undefined, CERT_PEM), { caPem: CERT_PEM });
  assert.equal(internalTrust(http, undefined, CERT_PEM), undefined);
  assert.throws(
    () => internalTrust(https, undefined, undefined),
    /needs tls_derive or certificate_authority/,
  );
});

test('channel credentials: TLS without a name override for the CA, with it for tls_derive, insecure for http', () => {
  const own = internalChannelCredentials({ caPem: CERT_PEM });
  assert.equal(own.credentials._isSecure(), true);
  assert.deepEqual(own.options, {}, 'the dialled host is verified, not a fixed name');
  const derived = internalChannelCredentials({ caPem: CERT_PEM, serverName: 'portcullis.internal' });
  assert.equal(derived.credentials._isSecure(), true);
  assert.equal(derived.options['grpc.ssl_target_name_override'], 'portcullis.internal');
  assert.equal(internalChannelCredentials(undefined).credentials._isSecure(), false);
  const client = internalClient(Buffer.alloc(32, 1), undefined, CERT_PEM);
  assert.equal(
    client.channel('databroker', new URL('https://databroker.internal:5453')).credentials._isSecure(),
    true,
  );
  assert.equal(client.channel('databroker', new URL('http://127.0.0.1:5453')).credentials._isSecure(), false);
});

test("Envoy's clusters for https:// URLs trust certificate_authority and check the URL's host", () => {
  const internal = endpoints(valid(base(PROXY)));
  assert.deepEqual(internal.authorize.tls, { caPem: CERT_PEM, serverName: 'authorize.internal' });
  assert.deepEqual(internal.http.tls, { caPem: CERT_PEM, serverName: 'authenticate.internal' });
  const plain = endpoints(
    valid(base({ ...PROXY, authenticate_internal_service_url: 'http://127.0.0.1:5444' })),
  );
  assert.equal(plain.http.tls, undefined, 'an http:// URL stays plain');
  assert.deepEqual(plain.authorize.tls, { caPem: CERT_PEM, serverName: 'authorize.internal' });
  const allInOne = endpoints(valid(base({ certificate_authority: CERT_PEM })));
  assert.deepEqual(
    [allInOne.authorize.tls, allInOne.http.tls],
    [undefined, undefined],
    'own listeners stay plain',
  );
});

test('with tls_derive the derived CA stays the only trust, and certificate_authority gets a warning', () => {
  const derived = base({ ...PROXY, tls_derive: 'portcullis.internal' });
  assert.deepEqual(parse(derived).warnings.map(formatProblem), [
    'certificate_authority: is ignored with tls_derive set: internal connections trust only the CA derived from shared_secret; unset certificate_authority or tls_derive',
  ]);
  const internal = endpoints(valid(derived), { caPem: 'derived-ca', serverName: 'portcullis.internal' });
  assert.deepEqual(
    [internal.authorize.tls, internal.http.tls],
    [
      { caPem: 'derived-ca', serverName: 'portcullis.internal' },
      { caPem: 'derived-ca', serverName: 'portcullis.internal' },
    ],
  );
});

test('the dry run shows the ext_authz cluster verifying certificate_authority and the URL host', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-ca-compile-'));
  try {
    const path = join(dir, 'proxy.yaml');
    writeFileSync(path, JSON.stringify(base(PROXY)));
    const out = new PassThrough();
    const err = new PassThrough();
    assert.equal(await runCompile(path, out, err, {}), 0, String(err.read()));
    const clusters = (parseYaml(String(out.read())) as { clusters: Record<string, unknown>[] }).clusters;
    for (const [name, host] of [
      [AUTHORIZE_CLUSTER, 'authorize.internal'],
      [OWN_HTTP_CLUSTER, 'authenticate.internal'],
    ] as const) {
      const cluster = clusters.find((candidate) => candidate['name'] === name);
      const tls = (cluster?.['transport_socket'] as { typed_config: Record<string, unknown> } | undefined)
        ?.typed_config;
      assert.equal(tls?.['sni'], host, name);
      const context = tls?.['common_tls_context'] as { validation_context: Record<string, unknown> };
      assert.deepEqual(context.validation_context['trusted_ca'], { inline_string: CERT_PEM }, name);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
