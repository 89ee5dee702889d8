// `portcullis kubernetes` against a real etcd + kube-apiserver and the real Envoy: the settings
// resource's CRD (deploy/kubernetes/crd.yaml) and a `global` object with its Secrets start
// Portcullis; status says Valid with the generation; a change is rebuilt live; a bad field and a
// missing Secret are named in status and an Event while the last good config keeps serving; of
// two replicas only the Lease holder writes status, and the other takes over when it dies.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CRD_PATH } from '../../src/kubernetes/crd-file.js';
import type { KubeObject, KubeRef } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { applyCrds, readYamlObjects } from '../support/kube-crds.js';
import {
  runKubePortcullisToExit,
  spawnKubePortcullis,
  type KubePortcullis,
} from '../support/kube-portcullis.js';
import { waitFor } from '../support/wait.js';

const GLOBAL: KubeRef = {
  apiVersion: 'portcullis.dev/v1alpha1',
  kind: 'Portcullis',
  metadata: { name: 'global' },
};
const LEASE: KubeRef = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name: 'portcullis-status', namespace: 'default' },
};
const ENVOY_READY = 'ready: Envoy is serving routes';
/** Secret values made at test time; no status, Event or log line may contain them. */
const CLIENT_SECRET = `client-secret-${randomBytes(12).toString('hex')}`;
const CORP_SECRET = `corp-secret-${randomBytes(12).toString('hex')}`;
const PARTNER_SECRET = `partner-secret-${randomBytes(12).toString('hex')}`;
const PARTNER_HINT = `hint-${randomBytes(6).toString('hex')}@partner.example`;
const SHARED_SECRET = randomBytes(32).toString('base64');

function secret(name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default' },
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
  };
}

function settings(spec: Record<string, unknown>): KubeObject {
  return { ...GLOBAL, metadata: { name: 'global' }, spec };
}

const VALID_SPEC = {
  insecureServer: true,
  authenticate: { url: 'https://authenticate.example.com' },
  identityProvider: { url: 'http://127.0.0.1:9/', secret: { name: 'idp' } },
  secrets: { name: 'core' },
};

interface Status {
  observedGeneration?: number;
  conditions?: {
    type: string;
    status: string;
    reason: string;
    message: string;
    observedGeneration?: number;
  }[];
  errors?: { field: string; message: string }[];
}

const statusOf = (object: KubeObject): Status => (object['status'] as Status | undefined) ?? {};
const generationOf = (object: KubeObject): number =>
  (object.metadata as { generation?: number }).generation ?? -1;
const condition = (object: KubeObject, type: string) =>
  statusOf(object).conditions?.find((c) => c.type === type);
/** The field managers that wrote the status subresource. */
function statusWriters(object: KubeObject): string[] {
  const fields = (object.metadata as { managedFields?: { manager?: string; subresource?: string }[] })
    .managedFields;
  return (fields ?? []).filter((entry) => entry.subresource === 'status').map((entry) => entry.manager ?? '');
}

async function envoyConfig(adminUrl: string): Promise<string> {
  const answer = await fetch(`${adminUrl}/config_dump`);
  return answer.ok ? await answer.text() : '';
}

describe('portcullis kubernetes: the settings resource on a real API server', () => {
  let cluster: KubeCluster;
  const replicas: KubePortcullis[] = [];

  before(async () => {
    cluster = await startKubeCluster();
    await cluster.admin.apply(
      secret('core', { shared_secret: SHARED_SECRET, cookie_secret: randomBytes(32).toString('base64') }),
    );
    await cluster.admin.apply(
      secret('idp', { client_id: 'portcullis', client_secret: `${CLIENT_SECRET}\n` }),
    );
  });
  after(async () => {
    for (const replica of replicas) await replica.stop('SIGKILL');
    await cluster?.stop();
  });

  it('exits non-zero with a clear message when the CRD is missing or the API server is unreachable', () => {
    const missing = runKubePortcullisToExit(cluster.kubeconfigPath);
    assert.equal(missing.status, 1);
    assert.match(missing.output, /CustomResourceDefinition portcullises\.portcullis\.dev is not installed/);
    assert.match(missing.output, /kubectl apply -f deploy\/kubernetes\/crd\.yaml/);
    const dir = mkdtempSync(join(tmpdir(), 'kube-unreachable-'));
    const path = join(dir, 'kubeconfig');
    writeFileSync(
      path,
      readFileSync(cluster.kubeconfigPath, 'utf8').replace(cluster.url, 'https://127.0.0.1:9'),
    );
    const unreachable = runKubePortcullisToExit(path);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(unreachable.status, 1);
    assert.match(unreachable.output, /cannot use the Kubernetes API server at https:\/\/127\.0\.0\.1:9/);
    for (const output of [missing.output, unreachable.output])
      assert.doesNotMatch(output, /\n\s+at /, 'no stack trace');
  });

  it('a valid object with Secrets starts Portcullis: status Valid with observedGeneration, Envoy has the listener', async () => {
    await applyCrds(cluster.admin, readYamlObjects(CRD_PATH));
    await cluster.admin.apply(settings(VALID_SPEC));
    const first = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-a',
      args: ['--lease-seconds', '3'],
      ready: ENVOY_READY,
    });
    replicas.push(first);
    assert.match(first.output(), /watching Portcullis global \(portcullises\.portcullis\.dev\)/);
    const object = await cluster.admin.waitFor(
      GLOBAL,
      (o) => condition(o, 'Valid')?.status === 'True' && statusOf(o).observedGeneration === generationOf(o),
      'status Valid=True for the current generation',
    );
    assert.equal(condition(object, 'Ready')?.status, 'True');
    assert.equal(condition(object, 'Ready')?.observedGeneration, generationOf(object));
    assert.deepEqual(statusOf(object).errors, []);
    assert.deepEqual(statusWriters(object), ['portcullis/replica-a']);
    const lease = await cluster.admin.get(LEASE);
    assert.equal((lease['spec'] as { holderIdentity?: string }).holderIdentity, 'replica-a');
    const dump = await envoyConfig(first.adminUrl);
    assert.match(dump, new RegExp(`"port_value": ${first.proxyPort}`), 'Envoy listens on the proxy port');
    assert.match(dump, /authenticate\.example\.com/);
  });

  it('a changed field is rebuilt live; observedGeneration follows', async () => {
    const first = replicas[0] as KubePortcullis;
    await cluster.admin.apply(
      settings({ ...VALID_SPEC, authenticate: { url: 'https://auth2.example.com' } }),
    );
    await cluster.admin.waitFor(
      GLOBAL,
      (o) =>
        generationOf(o) > 1 &&
        statusOf(o).observedGeneration === generationOf(o) &&
        condition(o, 'Valid')?.status === 'True',
      'status for the changed generation',
    );
    await waitFor(async () => (await envoyConfig(first.adminUrl)).includes('auth2.example.com'), {
      what: 'Envoy to get the new authenticate host',
      timeoutMs: 20_000,
    });
  });

  it('a bad field and a missing Secret: named in status and an Event; the last good config keeps serving', async () => {
    const first = replicas[0] as KubePortcullis;
    await cluster.admin.apply(
      settings({
        ...VALID_SPEC,
        authenticate: { url: 'https://auth3.example.com' },
        identityProvider: { url: 'not a url', secret: { name: 'missing' } },
      }),
    );
    const object = await cluster.admin.waitFor(
      GLOBAL,
      (o) => statusOf(o).observedGeneration === generationOf(o) && condition(o, 'Valid')?.status === 'False',
      'status Valid=False for the bad generation',
    );
    const errors = statusOf(object).errors ?? [];
    const fields = errors.map((error) => error.field);
    assert.ok(fields.includes('spec.identityProvider.secret'), JSON.stringify(errors));
    assert.ok(fields.includes('spec.identityProvider.url'), JSON.stringify(errors));
    assert.ok(
      errors.some((error) => error.message.includes('Secret default/missing not found')),
      JSON.stringify(errors),
    );
    assert.equal(condition(object, 'Ready')?.status, 'False');
    assert.equal(condition(object, 'Ready')?.reason, 'ChangeRefused');
    const events = await waitFor(
      async () => {
        const found = await cluster.admin.list({ apiVersion: 'v1', kind: 'Event', namespace: 'default' });
        const about = found.filter(
          (event) => (event['involvedObject'] as { name?: string; kind?: string }).kind === 'Portcullis',
        );
        return about.length > 0 ? about : undefined;
      },
      { what: 'an Event about the Portcullis object' },
    );
    const event = events[0] as KubeObject;
    assert.equal(event['type'], 'Warning');
    assert.equal(event['reason'], 'InvalidSettings');
    assert.match(String(event['message']), /spec\.identityProvider\.secret/);
    // The last good config (auth2) still serves; the refused one (auth3) never reached Envoy.
    const dump = await envoyConfig(first.adminUrl);
    assert.match(dump, /auth2\.example\.com/);
    assert.doesNotMatch(dump, /auth3\.example\.com/);
    for (const text of [JSON.stringify(object), JSON.stringify(events), first.output()])
      assert.ok(!text.includes(CLIENT_SECRET) && !text.includes(SHARED_SECRET), 'no secret value leaks');
    // Fixed again: Valid once more.
    await cluster.admin.apply(
      settings({ ...VALID_SPEC, authenticate: { url: 'https://auth4.example.com' } }),
    );
    await cluster.admin.waitFor(
      GLOBAL,
      (o) => statusOf(o).observedGeneration === generationOf(o) && condition(o, 'Valid')?.status === 'True',
      'status Valid=True after the fix',
    );
  });

  it('a referenced Secret is watched: deleting it is refused in status, re-creating it is valid again', async () => {
    const idp: KubeRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'idp', namespace: 'default' },
    };
    await cluster.admin.delete(idp);
    const refused = await cluster.admin.waitFor(
      GLOBAL,
      (o) => condition(o, 'Valid')?.status === 'False',
      'status to notice the deleted Secret',
    );
    assert.deepEqual(statusOf(refused).errors, [
      { field: 'spec.identityProvider.secret', message: 'Secret default/idp not found' },
    ]);
    await cluster.admin.apply(
      secret('idp', { client_id: 'portcullis', client_secret: `${CLIENT_SECRET}\n` }),
    );
    await cluster.admin.waitFor(
      GLOBAL,
      (o) => condition(o, 'Valid')?.status === 'True',
      'status to notice the re-created Secret',
    );
  });

  it('identityProviders: two named providers are stored unpruned and valid; a deleted client Secret is named in status', async () => {
    const first = replicas[0] as KubePortcullis;
    await cluster.admin.apply(secret('corp-idp', { client_id: 'corp', client_secret: CORP_SECRET }));
    await cluster.admin.apply(
      secret('partner-idp', { client_id: 'partner', client_secret: `${PARTNER_SECRET}\n` }),
    );
    await cluster.admin.apply(secret('partner-params', { login_hint: PARTNER_HINT }));
    const spec = {
      ...VALID_SPEC,
      authenticate: { url: 'https://auth-idps.example.com' },
      identityProviders: {
        corp: {
          provider: 'okta',
          url: 'http://127.0.0.1:9/corp',
          secret: { name: 'corp-idp' },
          scopes: ['openid', 'email', 'groups'],
          trustUnverifiedEmail: true,
        },
        partner: {
          url: 'http://127.0.0.1:9/partner',
          secret: { name: 'partner-idp', namespace: 'default' },
          requestParams: { prompt: 'login' },
          requestParamsSecret: { name: 'partner-params' },
        },
      },
    };
    const stored = await cluster.admin.apply(settings(spec));
    assert.deepEqual(stored['spec'], spec, 'the CRD schema keeps every identityProviders field');
    const valid = await cluster.admin.waitFor(
      GLOBAL,
      (o) => statusOf(o).observedGeneration === generationOf(o) && condition(o, 'Valid')?.status === 'True',
      'status Valid=True with two named providers',
    );
    assert.deepEqual(statusOf(valid).errors, []);
    assert.deepEqual(valid['spec'], spec);
    await waitFor(async () => (await envoyConfig(first.adminUrl)).includes('auth-idps.example.com'), {
      what: 'Envoy to get the settings with two named providers',
      timeoutMs: 20_000,
    });

    const partnerSecret: KubeRef = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'partner-idp', namespace: 'default' },
    };
    await cluster.admin.delete(partnerSecret);
    const refused = await cluster.admin.waitFor(
      GLOBAL,
      (o) => condition(o, 'Valid')?.status === 'False',
      "status to notice the deleted provider's Secret",
    );
    assert.deepEqual(statusOf(refused).errors, [
      { field: 'spec.identityProviders.partner.secret', message: 'Secret default/partner-idp not found' },
    ]);
    assert.equal(condition(refused, 'Ready')?.status, 'False');
    assert.equal(condition(refused, 'Ready')?.reason, 'ChangeRefused');
    // The last good config keeps serving.
    assert.match(await envoyConfig(first.adminUrl), /auth-idps\.example\.com/);
    for (const text of [JSON.stringify(refused), first.output()]) {
      for (const value of [CORP_SECRET, PARTNER_SECRET, PARTNER_HINT, CLIENT_SECRET])
        assert.ok(!text.includes(value), 'no secret value leaks into status or the log');
    }

    await cluster.admin.apply(
      secret('partner-idp', { client_id: 'partner', client_secret: `${PARTNER_SECRET}\n` }),
    );
    await cluster.admin.waitFor(
      GLOBAL,
      (o) => condition(o, 'Valid')?.status === 'True' && condition(o, 'Ready')?.status === 'True',
      "status to notice the provider's re-created Secret",
    );
  });

  it('two replicas: only the Lease holder writes status; the other takes over when it dies', async () => {
    const first = replicas[0] as KubePortcullis;
    const second = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-b',
      args: ['--lease-seconds', '3', '--without-envoy'],
      ready: 'ready: serving ADS for a sidecar Envoy',
    });
    replicas.push(second);
    await cluster.admin.apply(
      settings({ ...VALID_SPEC, authenticate: { url: 'https://auth5.example.com' } }),
    );
    const changed = await cluster.admin.waitFor(
      GLOBAL,
      (o) => statusOf(o).observedGeneration === generationOf(o) && condition(o, 'Valid')?.status === 'True',
      'status for the generation both replicas built',
    );
    // replica-b builds every change too (it serves): its reload log line.
    await waitFor(async () => /"msg":"config reloaded/.test(second.output()), {
      what: 'the second replica to reload the change',
      timeoutMs: 20_000,
    });
    assert.deepEqual(statusWriters(changed), ['portcullis/replica-a'], 'replica-b never wrote status');
    assert.equal(
      ((await cluster.admin.get(LEASE))['spec'] as { holderIdentity?: string }).holderIdentity,
      'replica-a',
    );

    const killedAt = performance.now();
    await first.stop('SIGKILL');
    const lease = await cluster.admin.waitFor(
      LEASE,
      (o) => (o['spec'] as { holderIdentity?: string }).holderIdentity === 'replica-b',
      'replica-b to take the Lease over',
      20_000,
    );
    const tookMs = performance.now() - killedAt;
    assert.ok(tookMs < 2 * 3000 + 1500, `took over in ${Math.round(tookMs)} ms (lease 3 s)`);
    assert.equal((lease['spec'] as { leaseTransitions?: number }).leaseTransitions, 1);
    await cluster.admin.apply(
      settings({ ...VALID_SPEC, authenticate: { url: 'https://auth6.example.com' } }),
    );
    const written = await cluster.admin.waitFor(
      GLOBAL,
      (o) =>
        statusOf(o).observedGeneration === generationOf(o) &&
        statusWriters(o).includes('portcullis/replica-b'),
      'replica-b to write status',
    );
    assert.equal(condition(written, 'Valid')?.status, 'True');
  });
});
