import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import {
  SIDECAR_CREDENTIAL_PLACEHOLDER,
  bootstrapToYaml,
  buildBootstrap,
} from '../../../src/envoy/bootstrap.js';
import { findRepoRoot } from '../../../src/envoy/locate.js';

const root = findRepoRoot();
const sidecarPath = join(root, 'envoy', 'sidecar.yaml');
/** Where Envoy reads the derived CA: docker-compose.yml's setup service writes it there. */
const CA_FILE = '/etc/envoy/portcullis-ca.pem';

const HEADER = [
  '# Bootstrap for an Envoy started on its own (sidecar mode), e.g. by docker-compose.yml.',
  '# Envoy learns listeners and clusters from Portcullis over ADS at portcullis:5443 (the compose service), over',
  `# TLS trusting only the CA in ${CA_FILE} (\`portcullis internal-ca --config <file>\`) and the name portcullis (tls_derive).`,
  '# Generated from buildBootstrap() in src/envoy/bootstrap.ts by test/unit/envoy/sidecar.test.ts:',
  '# regenerate with UPDATE_GOLDEN=1. Admin stays on 127.0.0.1 inside the container: never routable.',
  `# Replace ${SIDECAR_CREDENTIAL_PLACEHOLDER} with \`portcullis grpc-credential --config <file>\` before starting`,
  '# Envoy (envoy/README.md): Portcullis refuses an ADS stream without the credential derived from shared_secret.',
  '',
].join('\n');

test('envoy/sidecar.yaml is exactly buildBootstrap for ADS at portcullis:5443 over the derived TLS', () => {
  const expected = buildBootstrap({
    nodeId: 'portcullis-sidecar',
    ads: {
      address: 'portcullis',
      port: 5443,
      credential: SIDECAR_CREDENTIAL_PLACEHOLDER,
      tls: { caFile: CA_FILE, serverName: 'portcullis' },
    },
  });
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(sidecarPath, HEADER + bootstrapToYaml(expected));
  const file = parse(readFileSync(sidecarPath, 'utf8')) as unknown;
  assert.deepEqual(file, expected, 'envoy/sidecar.yaml drifted: rerun this test with UPDATE_GOLDEN=1');
});
