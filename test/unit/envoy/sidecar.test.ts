import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

const HEADER = [
  '# Bootstrap for an Envoy started on its own (sidecar mode), e.g. by docker-compose.yml.',
  '# Envoy learns listeners and clusters from Portcullis over ADS at portcullis:5443 (the compose service).',
  '# Generated from buildBootstrap() in src/envoy/bootstrap.ts by test/unit/envoy/sidecar.test.ts:',
  '# regenerate with UPDATE_GOLDEN=1. Admin stays on 127.0.0.1 inside the container: never routable.',
  `# Replace ${SIDECAR_CREDENTIAL_PLACEHOLDER} with \`portcullis grpc-credential --config <file>\` before starting`,
  '# Envoy (envoy/README.md): Portcullis refuses an ADS stream without the credential derived from shared_secret.',
  '',
].join('\n');

test('envoy/sidecar.yaml is exactly buildBootstrap for ADS at portcullis:5443', () => {
  const expected = buildBootstrap({
    nodeId: 'portcullis-sidecar',
    ads: { address: 'portcullis', port: 5443, credential: SIDECAR_CREDENTIAL_PLACEHOLDER },
  });
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(sidecarPath, HEADER + bootstrapToYaml(expected));
  const file = parse(readFileSync(sidecarPath, 'utf8')) as unknown;
  assert.deepEqual(file, expected, 'envoy/sidecar.yaml drifted: rerun this test with UPDATE_GOLDEN=1');
});

test('docker-compose.yml parses and wires portcullis, envoy, redis and an upstream', () => {
  const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { image?: string; volumes?: string[]; ports?: string[]; command?: unknown }>;
  };
  const services = compose.services;
  assert.deepEqual(Object.keys(services).sort(), ['envoy', 'portcullis', 'redis', 'upstream']);
  assert.equal(services['envoy']?.image, 'envoyproxy/envoy:v1.40.0');
  assert.match(services['portcullis']?.image ?? '', /^node:20/);
  assert.match(services['redis']?.image ?? '', /^redis:7/);
  assert.ok(
    services['envoy']?.ports?.some((p) => p.endsWith(':8080')),
    'envoy publishes 8080',
  );
  assert.match(
    JSON.stringify(services['portcullis']?.command),
    /portcullis.*--config.*\/config\/config\.yaml/,
  );
  // Every bind-mounted host path exists, except the example config another part of the repo owns.
  for (const [name, service] of Object.entries(services)) {
    for (const volume of service.volumes ?? []) {
      const host = volume.split(':')[0] ?? '';
      if (!host.startsWith('.') || host === './examples/sidecar.yaml') continue;
      assert.ok(existsSync(join(root, host)), `${name}: ${host} does not exist`);
    }
  }
  assert.ok(existsSync(join(dirname(join(root, 'envoy', 'sidecar.yaml')), 'README.md')), 'envoy/README.md');
});
