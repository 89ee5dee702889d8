// Envoy itself accepts every golden xDS output: each case's listeners, routes, clusters and
// endpoints are loaded as static resources into a bootstrap and checked with `envoy --mode
// validate`. Placeholder PEMs in the goldens are swapped for a certificate generated now. The
// fast path's ECDS resource (compiled apart from a build) is checked as its filter's config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { locateEnvoy } from '../../src/envoy/locate.js';
import { validateBootstrap } from '../../src/envoy/supervisor.js';
import { GOLDEN_DIR } from '../support/golden.js';
import { generateTestCertificate } from '../support/test-certs.js';
import { TEST_GRPC_CREDENTIAL } from '../support/grpc-credential.js';
import { renderResources } from '../../src/proto/render.js';
import { RESOURCE_TYPES, TYPED_EXTENSION_CONFIG_TYPE } from '../../src/proto/type-urls.js';
import { compileFastPathRbac } from '../../src/xds/compile/fast-path-rbac.js';

const XDS_DIR = join(GOLDEN_DIR, 'ir-to-xds');
type Json = Record<string, unknown>;

const cases = [
  ...new Set(
    readdirSync(XDS_DIR)
      .filter((file) => file.endsWith('.listeners.yaml'))
      .map((file) => file.split('.')[0] as string),
  ),
].sort();
const certificate = generateTestCertificate();
/** No resources of any type, to render one alone. */
const EMPTY_RESOURCES = Object.fromEntries(RESOURCE_TYPES.map((type) => [type, []])) as unknown as Parameters<
  typeof renderResources
>[0];

function read(name: string, kind: string): Json[] {
  const path = join(XDS_DIR, `${name}.${kind}.yaml`);
  assert.ok(existsSync(path), `${path} is missing`);
  return (parse(readFileSync(path, 'utf8')) as Json[] | null) ?? [];
}

/** Swaps placeholder PEMs and the system CA path for material that exists on this machine. */
function realMaterial(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(realMaterial);
  if (value !== null && typeof value === 'object') {
    const out: Json = {};
    for (const [key, member] of Object.entries(value)) {
      if (key === 'inline_string' && typeof member === 'string' && member.startsWith('GOLDEN-')) {
        // The goldens' stand-ins (test/unit/golden/golden.test.ts): GOLDEN-<WHO>-CERT or -KEY.
        out[key] = member.trim().endsWith('-KEY') ? certificate.keyPem : certificate.certPem;
      } else if (key === 'filename' && member === '/etc/ssl/certs/ca-certificates.crt') {
        out[key] = certificate.certFile;
      } else {
        out[key] = realMaterial(member);
      }
    }
    return out;
  }
  return value;
}

function bootstrapFor(name: string): Json {
  const routeConfigs = read(name, 'routes');
  const routeConfig = (configName: string): Json => {
    const found = routeConfigs.find((config) => config.name === configName);
    assert.ok(found, `route configuration ${configName} missing`);
    return found;
  };
  // Scopes as Envoy would fetch them over SRDS, each with the RouteConfiguration it names (which
  // Envoy would fetch over RDS) inline: a static scope list cannot fetch.
  const scopes = read(name, 'scopes').map(({ route_configuration_name: target, ...scope }) => ({
    ...scope,
    route_configuration: routeConfig(String(target)),
  }));
  const listeners = read(name, 'listeners').map((listener) => {
    const text = JSON.stringify(listener);
    // Inline the RouteConfiguration where the HCM would fetch it over RDS, and the scopes where it
    // would fetch them over SRDS.
    return JSON.parse(text, (key, member: unknown) => {
      if (member !== null && typeof member === 'object' && 'rds' in (member as Json)) {
        const { rds, ...rest } = member as Json & { rds: { route_config_name: string } };
        return { ...rest, route_config: routeConfig(rds.route_config_name) };
      }
      if (key === 'scoped_routes' && member !== null && typeof member === 'object') {
        const { scoped_rds: _dynamic, ...rest } = member as Json;
        assert.ok(scopes.length > 0, 'per-host scoped routes without scopes');
        return { ...rest, scoped_route_configurations_list: { scoped_route_configurations: scopes } };
      }
      return member;
    }) as Json;
  });
  const clusters = read(name, 'clusters');
  // EDS assignments are checked by loading each into a STATIC twin of its cluster.
  const endpointTwins = read(name, 'endpoints').map((assignment) => ({
    name: `validate-${String(assignment.cluster_name)}`,
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: { ...assignment, cluster_name: `validate-${String(assignment.cluster_name)}` },
  }));
  const bootstrap = buildBootstrap({
    ads: { address: '127.0.0.1', port: 1, credential: TEST_GRPC_CREDENTIAL },
    admin: { port: 0 },
  });
  return realMaterial({
    ...bootstrap,
    static_resources: {
      ...(bootstrap.static_resources as Json),
      listeners,
      clusters: [
        ...(bootstrap.static_resources as { clusters: Json[] }).clusters,
        ...clusters,
        ...endpointTwins,
      ],
    },
  }) as Json;
}

test('there are golden cases to validate', () => {
  assert.ok(cases.length >= 5, `found ${cases.length} cases`);
});

for (const name of cases) {
  test(`Envoy accepts golden output: ${name}`, async () => {
    const envoy = await locateEnvoy();
    const result = await validateBootstrap(envoy.path, bootstrapFor(name));
    assert.ok(result.ok, `envoy --mode validate rejected ${name}:\n${result.output}`);
  });
}

/** The filter configs of `name`'s ECDS filters replaced by `config` (as the resource would bring it). */
function withEcdsConfig(name: string, config: unknown): Json {
  const bootstrap = bootstrapFor(name);
  let replaced = 0;
  const edited = JSON.parse(JSON.stringify(bootstrap), (_key, member: unknown) => {
    if (member !== null && typeof member === 'object' && 'config_discovery' in (member as Json)) {
      replaced += 1;
      const filter = member as { config_discovery: Json };
      return { ...filter, config_discovery: { ...filter.config_discovery, default_config: config } };
    }
    return member;
  }) as Json;
  assert.ok(replaced > 0, `${name} has an ECDS filter`);
  return edited;
}

test('Envoy accepts the fast-path ECDS resource: revocations, none, and overflowed', async () => {
  const envoy = await locateEnvoy();
  for (const [label, revocations, overflowed] of [
    [
      'revocations',
      [
        { sid: 'AAAAAAAAAAAAAAAAAAAAAA', notBeforeMs: 1_700_000_000_000 },
        { sid: 'b', notBeforeMs: 1 },
      ],
      false,
    ],
    ['none', [], false],
    ['overflowed', [{ sid: 'x', notBeforeMs: 1 }], true],
  ] as const) {
    const rendered = renderResources({
      ...EMPTY_RESOURCES,
      [TYPED_EXTENSION_CONFIG_TYPE]: [{ message: compileFastPathRbac(revocations, overflowed) }],
    });
    const [resource] = rendered.filters as { typed_config: unknown }[];
    const result = await validateBootstrap(
      envoy.path,
      withEcdsConfig('identity-and-policy', resource?.typed_config),
    );
    assert.ok(result.ok, `envoy --mode validate rejected the ECDS resource (${label}):\n${result.output}`);
  }
  // The check is real: the map Envoy refuses (empty) fails validation.
  const broken = renderResources({
    ...EMPTY_RESOURCES,
    [TYPED_EXTENSION_CONFIG_TYPE]: [{ message: compileFastPathRbac([], false) }],
  }).filters[0] as { typed_config: { shadow_matcher: { matcher_tree: { exact_match_map: { map: Json } } } } };
  broken.typed_config.shadow_matcher.matcher_tree.exact_match_map.map = {};
  const refused = await validateBootstrap(
    envoy.path,
    withEcdsConfig('identity-and-policy', broken.typed_config),
  );
  assert.equal(refused.ok, false);
  assert.match(refused.output, /at least 1 pair/);
});

test('the validation is real: Envoy rejects a broken resource', async () => {
  const envoy = await locateEnvoy();
  const bootstrap = bootstrapFor(cases[0] as string);
  const clusters = (bootstrap.static_resources as { clusters: Json[] }).clusters;
  clusters.push({ name: 'broken', type: 'STATIC', connect_timeout: '1s', lb_policy: 'NOT_A_POLICY' });
  const result = await validateBootstrap(envoy.path, bootstrap);
  assert.equal(result.ok, false);
  assert.match(result.output, /NOT_A_POLICY|lb_policy|invalid/i);
});
