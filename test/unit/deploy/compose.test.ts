/**
 * docker-compose.yml, envoy/sidecar.yaml and the config the compose file mounts, checked together
 * without Docker: the Portcullis config is rendered with the Portcullis container's environment
 * (its secret files replaced by fresh ones) and compiled as `portcullis compile` does, and the
 * compose `setup` service's steps (credential, derived CA, filled-in bootstrap) are run in-process.
 * Every address Envoy dials must name the compose service that listens there, on its port.
 */
import assert from 'node:assert/strict';
import { X509Certificate, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { runCompile } from '../../../src/cmd/compile-command.js';
import { runGrpcCredential } from '../../../src/cmd/grpc-credential-command.js';
import { runInternalCa } from '../../../src/cmd/internal-ca-command.js';
import { loadConfigFile } from '../../../src/config/load-file.js';
import type { Config } from '../../../src/config/types.js';
import { AUTHORIZE_CLUSTER, OWN_HTTP_CLUSTER, XDS_CLUSTER } from '../../../src/contract/names.js';
import { SIDECAR_CREDENTIAL_PLACEHOLDER } from '../../../src/envoy/bootstrap.js';
import { MIN_ENVOY_VERSION, findRepoRoot } from '../../../src/envoy/locate.js';
import { deriveInternalTls } from '../../../src/pki/derived-tls.js';
import { splitHostPort } from '../../../src/shared/address.js';

interface Service {
  readonly image?: string;
  readonly command?: string | readonly string[];
  readonly volumes?: readonly string[];
  readonly environment?: Readonly<Record<string, string>>;
  readonly secrets?: readonly string[];
  readonly ports?: readonly string[];
  readonly expose?: readonly string[];
  readonly depends_on?: Readonly<Record<string, { readonly condition: string }>>;
}

interface Compose {
  readonly services: Readonly<Record<string, Service>>;
  readonly secrets?: Readonly<Record<string, { readonly file: string }>>;
  readonly volumes?: Readonly<Record<string, unknown>>;
}

/** A cluster or listener as proto-JSON, only as deep as the checks read it. */
type Json = Record<string, unknown>;

const root = findRepoRoot();
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8')) as Compose;
const scratch = mkdtempSync(join(tmpdir(), 'portcullis-compose-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function service(name: string): Service {
  const found = compose.services[name];
  assert.ok(found !== undefined, `docker-compose.yml has no ${name} service`);
  return found;
}

/** `source:target[:mode]` volume entries of a service. */
function mounts(of: Service): { source: string; target: string }[] {
  return (of.volumes ?? []).map((volume) => {
    const [source = '', target = ''] = volume.split(':');
    return { source, target };
  });
}

/** The host file a bind mount puts at `containerPath`. */
function hostPath(of: Service, containerPath: string): string {
  const mount = mounts(of).find((m) => m.target === containerPath);
  assert.ok(mount !== undefined && mount.source.startsWith('.'), `${containerPath} is not bind-mounted`);
  return join(root, mount.source);
}

function commandText(of: Service): string {
  return typeof of.command === 'string' ? of.command : (of.command ?? []).join(' ');
}

/** The value after `flag` in a service's command. */
function flagValue(of: Service, flag: string): string {
  const match = new RegExp(`${flag}[ =](\\S+)`).exec(commandText(of));
  assert.ok(match?.[1] !== undefined, `no ${flag} in the command`);
  return match[1];
}

/** Container ports a service publishes on the host (`[ip:]host:container[/proto]`). */
function publishedPorts(of: Service): number[] {
  return (of.ports ?? []).map((entry) => Number(entry.split('/')[0]?.split(':').at(-1)));
}

/**
 * The service's environment as the container sees it, with each file under /run/secrets/
 * replaced by a fresh file of 32 random bytes (base64) here: a compose secret the service lists.
 */
function containerEnv(name: string): Record<string, string> {
  const of = service(name);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(of.environment ?? {})) {
    const secret = /^\/run\/secrets\/(.+)$/.exec(value)?.[1];
    if (secret === undefined) {
      env[key] = value;
      continue;
    }
    assert.ok(of.secrets?.includes(secret), `${name}: ${key} names secret ${secret}, not given to it`);
    assert.ok(compose.secrets?.[secret] !== undefined, `${name}: no top-level secret ${secret}`);
    const file = join(scratch, secret);
    if (!existsSync(file)) writeFileSync(file, `${randomBytes(32).toString('base64')}\n`);
    env[key] = file;
  }
  return env;
}

function collector(): { stream: Writable; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

const portcullis = service('portcullis');
const configPath = hostPath(portcullis, flagValue(portcullis, '--config'));
const portcullisEnv = containerEnv('portcullis');

function loadConfig(): Config {
  const loaded = loadConfigFile(configPath, portcullisEnv);
  assert.ok(loaded.config !== undefined, JSON.stringify(loaded.problems));
  return loaded.config;
}

/** What `portcullis compile` prints for the Portcullis container, parsed. */
async function compiled(): Promise<{ clusters: Json[]; listeners: Json[] }> {
  const out = collector();
  const err = collector();
  assert.equal(await runCompile(configPath, out.stream, err.stream, portcullisEnv), 0, err.text());
  return parse(out.text()) as { clusters: Json[]; listeners: Json[] };
}

function cluster(clusters: Json[], name: string): Json {
  const found = clusters.find((c) => c['name'] === name);
  assert.ok(found !== undefined, `no cluster ${name}`);
  return found;
}

/** The one host and port a cluster dials. */
function endpointOf(c: Json): { host: string; port: number } {
  const assignment = c['load_assignment'] as {
    endpoints: { lb_endpoints: { endpoint: { address: { socket_address: Json } } }[] }[];
  };
  const targets = assignment.endpoints.flatMap((e) => e.lb_endpoints.map((l) => l.endpoint.address));
  assert.equal(targets.length, 1, `${String(c['name'])} dials one endpoint`);
  const address = targets[0]!.socket_address;
  return { host: String(address['address']), port: Number(address['port_value']) };
}

/** The TLS a cluster dials with: SNI and the trusted CA (inline PEM or file). */
function tlsOf(c: Json): { sni: string; ca: { inline_string?: string; filename?: string } } {
  const config = (c['transport_socket'] as { typed_config?: Json } | undefined)?.typed_config;
  assert.ok(config !== undefined, `${String(c['name'])} dials without TLS`);
  const common = config['common_tls_context'] as { validation_context: { trusted_ca: Json } };
  return { sni: String(config['sni']), ca: common.validation_context.trusted_ca };
}

test('the compose file runs Portcullis in sidecar mode, with secrets from git-ignored files only', () => {
  assert.match(commandText(portcullis), /--without-envoy/);
  assert.equal(service('envoy').image, `envoyproxy/envoy:v${MIN_ENVOY_VERSION}`);
  for (const name of ['portcullis', 'setup']) assert.match(service(name).image ?? '', /^node:20/, name);
  const gitignore = readFileSync(join(root, '.gitignore'), 'utf8').split('\n');
  for (const [name, secret] of Object.entries(compose.secrets ?? {})) {
    const dir = secret.file.replace(/^\.\//, '').split('/')[0] ?? '';
    assert.ok(gitignore.includes(`${dir}/`), `secret ${name} lies in ${dir}/, which git does not ignore`);
  }
  for (const [name, of] of Object.entries(compose.services)) {
    for (const [key, value] of Object.entries(of.environment ?? {})) {
      if (/SECRET|CREDENTIAL|PASSWORD/.test(key)) {
        assert.match(value, /^\/run\/secrets\//, `${name}: ${key} must name a secret file, not hold one`);
      }
    }
    for (const { source } of mounts(of)) {
      if (source.startsWith('.'))
        assert.ok(existsSync(join(root, source)), `${name}: ${source} does not exist`);
    }
  }
  const config = loadConfigFile(configPath, {}).config;
  assert.ok(config !== undefined);
  assert.equal(config.shared_secret, undefined, 'the mounted config holds no shared_secret');
  assert.equal(config.cookie_secret, undefined, 'the mounted config holds no cookie_secret');
  // The container's environment gives both, from the secret files.
  assert.ok(loadConfig().shared_secret !== undefined);
  assert.ok(loadConfig().cookie_secret !== undefined);
});

test('Envoy dials ext_authz and the sign-in endpoints at the portcullis service, over the derived TLS', async () => {
  const config = loadConfig();
  const grpc = splitHostPort(config.grpc_address);
  assert.ok(config.tls_derive !== undefined, 'tls_derive: Envoy reaches Portcullis over TLS');
  const { clusters } = await compiled();
  const authorize = cluster(clusters, AUTHORIZE_CLUSTER);
  assert.deepEqual(endpointOf(authorize), { host: 'portcullis', port: grpc.port });
  const signIn = cluster(clusters, OWN_HTTP_CLUSTER);
  assert.deepEqual(endpointOf(signIn), { host: 'portcullis', port: grpc.port + 1 });
  const exposed = (portcullis.expose ?? []).map(Number);
  assert.ok(exposed.includes(grpc.port) && exposed.includes(grpc.port + 1), `portcullis exposes ${exposed}`);
  // Both trust only the derived CA and name that the Portcullis container serves.
  const secret = readFileSync(portcullisEnv['SHARED_SECRET_FILE'] ?? '', 'utf8').trim();
  const derived = await deriveInternalTls(Buffer.from(secret, 'base64'), config.tls_derive);
  for (const c of [authorize, signIn]) {
    assert.deepEqual(tlsOf(c), { sni: config.tls_derive, ca: { inline_string: derived.caPem } });
  }
});

test('Envoy reaches ADS at portcullis:<grpc port> with the bootstrap the setup service writes', async () => {
  const config = loadConfig();
  const envoy = service('envoy');
  const setup = service('setup');
  for (const name of ['envoy', 'portcullis']) {
    assert.equal(service(name).depends_on?.['setup']?.condition, 'service_completed_successfully', name);
  }
  // Envoy reads the bootstrap and the CA from the volume setup writes, at the same paths.
  const bootstrapPath = flagValue(envoy, '-c');
  const shared = mounts(envoy).find((m) => bootstrapPath.startsWith(`${m.target}/`));
  assert.ok(
    shared !== undefined && compose.volumes?.[shared.source] !== undefined,
    'bootstrap in a named volume',
  );
  assert.ok(mounts(setup).some((m) => m.source === shared.source && m.target === shared.target));
  const template = readFileSync(join(root, 'envoy', 'sidecar.yaml'), 'utf8');
  const steps = commandText(setup);
  assert.match(steps, new RegExp(`envoy/sidecar\\.yaml > ${bootstrapPath}`));
  assert.match(steps, new RegExp(`grpc-credential --config ${flagValue(portcullis, '--config')}`));
  // setup's steps, run here with the secret the Portcullis container has (sed replaces on every line).
  const setupEnv = containerEnv('setup');
  assert.deepEqual(setupEnv, { SHARED_SECRET_FILE: portcullisEnv['SHARED_SECRET_FILE'] });
  const setupConfig = hostPath(setup, flagValue(setup, '--config'));
  assert.equal(setupConfig, configPath, 'setup derives from the config Portcullis runs');
  const token = collector();
  assert.equal(runGrpcCredential(setupConfig, setupEnv, token.stream, collector().stream), 0);
  const ca = collector();
  assert.equal(await runInternalCa(setupConfig, setupEnv, ca.stream, collector().stream), 0);
  const bootstrap = parse(template.replaceAll(SIDECAR_CREDENTIAL_PLACEHOLDER, token.text().trim())) as {
    static_resources: { clusters: Json[]; secrets: Json[] };
  };
  assert.ok(!JSON.stringify(bootstrap).includes(SIDECAR_CREDENTIAL_PLACEHOLDER));
  assert.match(
    JSON.stringify(bootstrap.static_resources.secrets),
    new RegExp(`Bearer ${token.text().trim()}`),
  );
  const xds = cluster(bootstrap.static_resources.clusters, XDS_CLUSTER);
  assert.deepEqual(endpointOf(xds), { host: 'portcullis', port: splitHostPort(config.grpc_address).port });
  const tls = tlsOf(xds);
  assert.equal(tls.sni, config.tls_derive);
  const caFile = tls.ca.filename ?? '';
  assert.ok(caFile.startsWith(`${shared.target}/`), `the CA ${caFile} is in the shared volume`);
  assert.match(steps, new RegExp(`internal-ca --config \\S+ > ${caFile}`));
  // The CA setup writes is the one that issued the certificate the gRPC port serves, for the SNI.
  const derived = await deriveInternalTls(
    Buffer.from(readFileSync(setupEnv['SHARED_SECRET_FILE'] ?? '', 'utf8').trim(), 'base64'),
    config.tls_derive ?? '',
  );
  const served = new X509Certificate(derived.certPem);
  assert.ok(served.verify(new X509Certificate(ca.text()).publicKey), 'served certificate signed by the CA');
  assert.equal(served.checkHost(tls.sni), tls.sni);
});

test('Redis is the redis service and the published ports are the listeners Envoy opens', async () => {
  const config = loadConfig();
  assert.equal(config.databroker_storage_type, 'redis');
  const redisUrl = new URL(config.databroker_storage_connection_string?.reveal() ?? '');
  const redis = service(redisUrl.hostname);
  assert.match(redis.image ?? '', /^redis:/);
  assert.ok(
    (redis.expose ?? []).map(Number).includes(Number(redisUrl.port || 6379)),
    'redis exposes its port',
  );
  assert.ok('redis' in (portcullis.depends_on ?? {}));
  const { listeners } = await compiled();
  const listenerPorts = listeners
    .map((l) => Number((l['address'] as { socket_address: Json }).socket_address['port_value']))
    .sort();
  assert.deepEqual(publishedPorts(service('envoy')).sort(), listenerPorts);
  for (const [name, of] of Object.entries(compose.services)) {
    if (name !== 'envoy') assert.deepEqual(of.ports ?? [], [], `${name} publishes nothing`);
  }
  // Every upstream a route sends to is a compose service on a port it exposes.
  for (const route of config.routes) {
    for (const to of route.to) {
      const upstream = service(to.url.hostname);
      assert.ok((upstream.expose ?? []).map(Number).includes(Number(to.url.port)), to.url.href);
    }
  }
});
