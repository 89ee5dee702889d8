// Host ownership on a real etcd + kube-apiserver and the real Envoy: namespace team-a serves
// app.example.com from an Ingress; an Ingress in team-b adding `/admin` on that host is left out
// (the request goes to team-a's backend, as team-a's own `/` path says) and a RouteRefused Event
// on team-b's Ingress names the owner and how to share; once team-a's Ingress shares the host with
// portcullis.dev/allowed_namespaces, team-b's path serves, and taking the annotation away ends it.
// The Lease holder records the owners in the Portcullis object's status.hostOwners, and a host
// recorded for team-a stays team-a's when team-b edits an Ingress OLDER than team-a's to claim it.
// Certificates are ordered, never left out: team-a's older Ingress bringing a certificate for
// team-b's host (and one of its own) is served for it only until team-b has its own, which then
// goes first and wins by SNI; team-a's keeps its other name, and a RouteRefused Event names the owner.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeClient, KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import {
  applySettings,
  endpointSlice,
  ingress,
  ingressClass,
  webService,
} from '../support/kube-route-objects.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import { sendTlsToListener, sendToListener } from '../support/listener-request.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { waitFor } from '../support/wait.js';
import { fingerprintOf, servedFingerprint } from '../support/churn-portcullis.js';
import { generateTestCertificate } from '../support/test-certs.js';

const PUBLIC = 'portcullis.dev/allow_public_unauthenticated_access';
const SHARE = 'portcullis.dev/allowed_namespaces';
const HOST = 'app.example.com';
const PAY = 'pay.example.com';

/** The settings object's status.hostOwners (empty when it has none). */
function hostOwnersOf(object: KubeObject): Record<string, string> {
  return (object['status'] as { hostOwners?: Record<string, string> } | undefined)?.hostOwners ?? {};
}

/** `object` (a helper's object in `default`) placed in `namespace`. */
function inNamespace(object: KubeObject, namespace: string): KubeObject {
  return { ...object, metadata: { ...(object.metadata as object), namespace } } as KubeObject;
}

/** Ingress `namespace/name`: Prefix `path` on `host` (default HOST) to that namespace's Service `web`. */
function tenantIngress(
  namespace: string,
  name: string,
  path: string,
  annotations: Record<string, string>,
  host = HOST,
): KubeObject {
  const made = inNamespace(ingress(name, host, annotations), namespace);
  const spec = made['spec'] as { rules: { http: { paths: { path: string }[] } }[] };
  spec.rules[0]!.http.paths[0]!.path = path;
  return made;
}

/** A kubernetes.io/tls Secret `namespace/name` whose certificate names `names`, and its PEM. */
function tlsSecret(
  namespace: string,
  name: string,
  names: readonly string[],
): { readonly secret: KubeObject; readonly certPem: string } {
  const made = generateTestCertificate(names[0], names);
  return {
    certPem: made.certPem,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(made.certPem).toString('base64'),
        'tls.key': Buffer.from(made.keyPem).toString('base64'),
      },
    } as KubeObject,
  };
}

/** `made` with `spec.tls` naming Secret `secretName`. */
function withTls(made: KubeObject, secretName: string): KubeObject {
  return { ...made, spec: { ...(made['spec'] as object), tls: [{ secretName }] } } as KubeObject;
}

/** Waits (20 s) for a RouteRefused Event about Ingress `namespace/name` whose message matches `pattern`. */
function waitForRefusal(
  client: KubeClient,
  namespace: string,
  name: string,
  pattern: RegExp,
): Promise<KubeObject> {
  return waitFor(
    async () => {
      const events = await client.list({ apiVersion: 'v1', kind: 'Event', namespace });
      return events.find((event) => {
        const about = event['involvedObject'] as { kind?: string; name?: string; namespace?: string };
        return (
          about.kind === 'Ingress' &&
          about.name === name &&
          about.namespace === namespace &&
          event['reason'] === 'RouteRefused' &&
          pattern.test(String(event['message']))
        );
      });
    },
    { what: `a RouteRefused Event on Ingress ${namespace}/${name} matching ${pattern}`, timeoutMs: 20_000 },
  );
}

describe('portcullis kubernetes: one namespace cannot add paths on a host another namespace owns', () => {
  let testHost: NetnsHost;
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  const echoes: NetnsEcho[] = [];
  /** The id of the echo backend that answers `path` on `host`, or the status when none does. */
  const answerer = async (path: string, host = HOST): Promise<string> => {
    const answer = await sendToListener(replica.proxyPort, host, path);
    if (answer.status !== 200) return `status ${answer.status}`;
    const id = /"id":"([^"]*)"/.exec(answer.body)?.[1];
    return id ?? `status 200 without an echo id: ${answer.body.slice(0, 80)}`;
  };

  before(async () => {
    testHost = await startNetnsHost();
    cluster = await startKubeCluster();
    await applySettings(cluster.admin);
    await cluster.admin.apply(ingressClass('portcullis', 'portcullis.dev/ingress-controller'));
    for (const namespace of ['team-a', 'team-b']) {
      const echo = await testHost.startEcho(namespace);
      echoes.push(echo);
      await cluster.admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await cluster.admin.apply(inNamespace(webService(echo.port), namespace));
      await cluster.admin.apply(
        inNamespace(endpointSlice(`web-${namespace}`, echo.port, [testHost.address]), namespace),
      );
    }
    // team-a first: the older (and, within one second, team-a/web sorts before team-b/admin).
    await cluster.admin.apply(tenantIngress('team-a', 'web', '/', { [PUBLIC]: 'true' }));
    await cluster.admin.apply(tenantIngress('team-b', 'admin', '/admin', { [PUBLIC]: 'true' }));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-own',
      args: ['--lease-seconds', '3'],
      ready: 'ready: Envoy is serving routes',
    });
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    for (const echo of echoes) await echo.stop();
    await testHost?.stop();
  });

  it("team-b's /admin on team-a's host is not served: team-a's backend answers, and an Event names the owner", async () => {
    await waitFor(async () => (await answerer('/')) === 'team-a', {
      what: "team-a's Ingress to serve",
      timeoutMs: 20_000,
    });
    assert.equal(await answerer('/admin'), 'team-a', "/admin goes where team-a's own / path sends it");
    assert.equal(await answerer('/admin/users'), 'team-a');
    const event = await waitForRefusal(cluster.admin, 'team-b', 'admin', /belongs to namespace team-a/);
    const message = String(event['message']);
    assert.match(
      message,
      /^Ingress team-b\/admin: spec\.rules\[0\]\.host: host app\.example\.com belongs to namespace team-a \(Ingress team-a\/web/,
    );
    assert.match(message, /portcullis\.dev\/allowed_namespaces: "team-b"/);
    assert.match(replica.output(), /route paths left out/);
  });

  it("after team-a shares the host with allowed_namespaces, team-b's /admin serves; unsharing ends it", async () => {
    await cluster.admin.apply(tenantIngress('team-a', 'web', '/', { [PUBLIC]: 'true', [SHARE]: 'team-b' }));
    await waitFor(async () => (await answerer('/admin')) === 'team-b', {
      what: "team-b's /admin to serve once shared",
      timeoutMs: 20_000,
    });
    assert.equal(await answerer('/admin/users'), 'team-b');
    assert.equal(await answerer('/'), 'team-a', 'the rest of the host stays team-a');
    await cluster.admin.apply(tenantIngress('team-a', 'web', '/', { [PUBLIC]: 'true' }));
    await waitFor(async () => (await answerer('/admin')) === 'team-a', {
      what: "team-b's /admin to be left out again",
      timeoutMs: 20_000,
    });
  });

  it("records the owners in the Portcullis object's status.hostOwners, for every replica to read", async () => {
    const global = await cluster.admin.waitFor(
      { apiVersion: 'portcullis.dev/v1alpha1', kind: 'Portcullis', metadata: { name: 'global' } },
      (object) => hostOwnersOf(object)[HOST] === 'team-a',
      `status.hostOwners to name team-a for ${HOST}`,
      20_000,
    );
    assert.deepEqual(hostOwnersOf(global), { [HOST]: 'team-a' }, 'only claimed hosts, each once');
  });

  it("a host recorded for team-a stays team-a's when team-b edits an OLDER Ingress to claim it", async () => {
    // team-b's Ingress first, on a host of its own; team-a's strictly later (creation times are seconds).
    const legacy = await cluster.admin.apply(
      tenantIngress('team-b', 'legacy', '/login', { [PUBLIC]: 'true' }, 'legacy.example.com'),
    );
    const legacyCreated = String((legacy.metadata as { creationTimestamp?: string }).creationTimestamp);
    await waitFor(async () => new Date().toISOString().replace(/\.\d+Z$/, 'Z') > legacyCreated, {
      what: 'the clock to pass the second team-b/legacy was created in',
      timeoutMs: 3_000,
      intervalMs: 50,
    });
    const pay = await cluster.admin.apply(tenantIngress('team-a', 'pay', '/', { [PUBLIC]: 'true' }, PAY));
    const payCreated = String((pay.metadata as { creationTimestamp?: string }).creationTimestamp);
    assert.ok(
      legacyCreated < payCreated,
      `team-b/legacy (${legacyCreated}) is older than team-a/pay (${payCreated})`,
    );
    await cluster.admin.waitFor(
      { apiVersion: 'portcullis.dev/v1alpha1', kind: 'Portcullis', metadata: { name: 'global' } },
      (object) => hostOwnersOf(object)[PAY] === 'team-a',
      `status.hostOwners to record team-a for ${PAY}`,
      20_000,
    );
    await waitFor(async () => (await answerer('/login', PAY)) === 'team-a', {
      what: `team-a's Ingress to serve ${PAY}`,
      timeoutMs: 20_000,
    });
    // The older team-b Ingress now claims /login on team-a's host: the record decides, not age.
    await cluster.admin.apply(tenantIngress('team-b', 'legacy', '/login', { [PUBLIC]: 'true' }, PAY));
    const event = await waitForRefusal(
      cluster.admin,
      'team-b',
      'legacy',
      /host pay\.example\.com belongs to namespace team-a/,
    );
    assert.match(String(event['message']), /Ingress team-a\/pay claims it/);
    assert.equal(await answerer('/login', PAY), 'team-a', "/login stays with team-a's / path");
    const global = await cluster.admin.get({
      apiVersion: 'portcullis.dev/v1alpha1',
      kind: 'Portcullis',
      metadata: { name: 'global' },
    });
    assert.equal(hostOwnersOf(global)[PAY], 'team-a');
  });
});

describe("portcullis kubernetes: a certificate naming another namespace's host is ordered after the owner's, not left out", () => {
  let testHost: NetnsHost;
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  const echoes: NetnsEcho[] = [];
  const theirs = tlsSecret('team-a', 'legacy-tls', [PAY, 'legacy.example.com']);
  const mine = tlsSecret('team-b', 'pay-tls', [PAY]);

  before(async () => {
    testHost = await startNetnsHost();
    cluster = await startKubeCluster();
    await applySettings(cluster.admin, undefined, { insecureServer: false });
    await cluster.admin.apply(ingressClass('portcullis', 'portcullis.dev/ingress-controller'));
    for (const namespace of ['team-a', 'team-b']) {
      const echo = await testHost.startEcho(namespace);
      echoes.push(echo);
      await cluster.admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
      await cluster.admin.apply(inNamespace(webService(echo.port), namespace));
      await cluster.admin.apply(
        inNamespace(endpointSlice(`web-${namespace}`, echo.port, [testHost.address]), namespace),
      );
    }
    await cluster.admin.apply(theirs.secret);
    await cluster.admin.apply(mine.secret);
    // The intruder team-a's Ingress first, on a host of its own: older, and its namespace sorts
    // first, so its certificate comes first in the order given. The owner team-b's later, on PAY.
    const legacy = await cluster.admin.apply(
      withTls(
        tenantIngress('team-a', 'legacy', '/login', { [PUBLIC]: 'true' }, 'legacy.example.com'),
        'legacy-tls',
      ),
    );
    const legacyCreated = String((legacy.metadata as { creationTimestamp?: string }).creationTimestamp);
    await waitFor(async () => new Date().toISOString().replace(/\.\d+Z$/, 'Z') > legacyCreated, {
      what: 'the clock to pass the second team-a/legacy was created in',
      timeoutMs: 3_000,
      intervalMs: 50,
    });
    await cluster.admin.apply(tenantIngress('team-b', 'pay', '/', { [PUBLIC]: 'true' }, PAY));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-cert',
      args: ['--lease-seconds', '3'],
      ready: 'ready: Envoy is serving routes',
    });
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    for (const echo of echoes) await echo.stop();
    await testHost?.stop();
  });

  it("team-a's certificate naming team-b's host serves only until team-b has its own, and keeps its other name", async () => {
    const theirPrint = fingerprintOf(theirs.certPem);
    const minePrint = fingerprintOf(mine.certPem);
    const shown = (servername: string): Promise<string> =>
      servedFingerprint(replica.proxyPort, servername).catch((err: unknown) => `error: ${String(err)}`);
    // team-b has no certificate for PAY: team-a's, naming it, is served for it (nothing is left out).
    await waitFor(async () => (await shown(PAY)) === theirPrint, {
      what: `team-a's certificate to be served for ${PAY} while team-b has none`,
      timeoutMs: 20_000,
    });
    const event = await waitForRefusal(cluster.admin, 'team-a', 'legacy', /the certificate names host/);
    assert.match(
      String(event['message']),
      /^Ingress team-a\/legacy: spec\.tls\[0\]\.secretName \(Secret team-a\/legacy-tls\): the certificate names host pay\.example\.com belongs to namespace team-b \(Ingress team-b\/pay claims it.*\); it is still served, after that namespace's certificates/,
    );
    // team-b brings its own: it goes before team-a's older one, and Envoy shows it for PAY.
    await cluster.admin.apply(
      withTls(tenantIngress('team-b', 'pay', '/', { [PUBLIC]: 'true' }, PAY), 'pay-tls'),
    );
    await waitFor(async () => (await shown(PAY)) === minePrint, {
      what: `team-b's own certificate to win for ${PAY}`,
      timeoutMs: 20_000,
    });
    const answer = await sendTlsToListener(replica.proxyPort, PAY, '/login', mine.certPem);
    assert.equal(answer.status, 200);
    assert.match(answer.body, /"id":"team-b"/);
    assert.equal(
      await shown('legacy.example.com'),
      theirPrint,
      "team-a's certificate still serves its own host",
    );
    const own = await sendTlsToListener(replica.proxyPort, 'legacy.example.com', '/login', theirs.certPem);
    assert.match(own.body, /"id":"team-a"/);
  });
});
