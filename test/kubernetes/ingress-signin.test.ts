// Sign-in through Ingress routes of `portcullis kubernetes`, with every real part: etcd and
// kube-apiserver, the real Envoy, the test IdP (oidc-provider on loopback) named by the Portcullis
// settings object (its client secret in a Secret), and an echo backend on a network-namespace test
// host (netns-host.ts). Alice signs in without a browser (idp-login.ts's completeLogin); an Ingress
// admitting her sends her request to the backend with an assertion that verifies against the route
// host's JWKS, one whose policy excludes her answers 403. Then, under a bounded concurrent load of
// her signed-in requests, an annotation change that leaves access alone, a second endpoint, the
// first one turning terminating (a rolling restart) and the deletion of another Ingress each take
// effect with no failed request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { HANDOFF_PATH, SIGN_IN_PATH } from '../../src/contract/endpoints.js';
import { completeLogin } from '../support/idp-login.js';
import type { KubeObject } from '../support/kube-client.js';
import { startKubeCluster, type KubeCluster } from '../support/kube-cluster.js';
import { spawnKubePortcullis, type KubePortcullis } from '../support/kube-portcullis.js';
import {
  applySettings,
  endpointSlice,
  ingress,
  ingressClass,
  ingressRef,
  webService,
} from '../support/kube-route-objects.js';
import { startNetnsHost, type NetnsEcho, type NetnsHost } from '../support/netns-host.js';
import { freePort } from '../support/ports.js';
import { EnvoyClient } from '../support/sign-in-envoy.js';
import { startTestIdp, type TestIdp } from '../support/test-idp.js';
import { waitFor } from '../support/wait.js';

const CLIENT = { clientId: 'portcullis-kube-signin', clientSecret: 'kube-signin-secret' };
const ALLOWED_USERS = 'portcullis.dev/allowed_users';
const PASS_IDENTITY = 'portcullis.dev/pass_identity_headers';

describe('portcullis kubernetes: sign-in on Ingress routes (real IdP, API server and Envoy)', () => {
  let testHost: NetnsHost;
  let idp: TestIdp;
  let cluster: KubeCluster;
  let replica: KubePortcullis;
  let backend: NetnsEcho;
  let second: NetnsEcho;
  let port: number;
  let client: EnvoyClient;
  const origin = (name: string): string => `http://${name}.localhost:${port}`;
  const admitted = {
    name: 'app',
    annotations: { [ALLOWED_USERS]: 'alice@example.com', [PASS_IDENTITY]: 'true' },
  };

  before(async () => {
    testHost = await startNetnsHost();
    backend = await testHost.startEcho('web-a');
    idp = await startTestIdp();
    port = await freePort();
    idp.addClient({
      ...CLIENT,
      redirectUris: [`${origin('authenticate')}/oauth2/callback`],
      postLogoutRedirectUris: [`${origin('authenticate')}/.portcullis/signed_out`],
    });
    cluster = await startKubeCluster();
    await applySettings(cluster.admin, {
      idpUrl: idp.issuer,
      ...CLIENT,
      authenticateUrl: origin('authenticate'),
    });
    await cluster.admin.apply(ingressClass('portcullis', 'portcullis.dev/ingress-controller'));
    await cluster.admin.apply(webService(backend.port));
    await cluster.admin.apply(endpointSlice('web-1', backend.port, [testHost.address]));
    await cluster.admin.apply(ingress('app', `app.localhost`, admitted.annotations));
    await cluster.admin.apply(ingress('staff', `staff.localhost`, { [ALLOWED_USERS]: 'bob@example.com' }));
    replica = await spawnKubePortcullis({
      kubeconfigPath: cluster.kubeconfigPath,
      identity: 'replica-signin',
      ready: 'ready: Envoy is serving routes',
      proxyPort: port,
    });
    client = new EnvoyClient(port);
  });
  after(async () => {
    await replica?.stop('SIGKILL');
    await cluster?.stop();
    await idp?.close();
    await backend?.stop();
    await second?.stop();
    await testHost?.stop();
  });

  it('alice signs in; the admitting route reaches the backend with a verifiable assertion; the other gives 403', async () => {
    const original = `${origin('app')}/page`;
    const app = await waitFor(
      async () => {
        const answer = await client.get(original);
        return answer.status === 302 ? answer : undefined;
      },
      { what: 'the app route to send browsers to sign in', timeoutMs: 20_000 },
    );
    const signInUrl = new URL(app.headers.location ?? '');
    assert.equal(`${signInUrl.origin}${signInUrl.pathname}`, `${origin('authenticate')}${SIGN_IN_PATH}`);
    const toIdp = await client.get(signInUrl);
    assert.equal(toIdp.status, 302, `sign-in did not lead to the IdP: ${toIdp.body}`);
    const callback = await completeLogin(toIdp.headers.location ?? '', idp.user.username, idp.user.password);
    const handoff = await client.get(callback);
    assert.equal(handoff.status, 302, `the callback failed: ${handoff.body}`);
    const handoffUrl = new URL(handoff.headers.location ?? '');
    assert.equal(handoffUrl.pathname, HANDOFF_PATH);
    const landed = await client.get(handoffUrl);
    assert.equal(landed.status, 302, landed.body);

    const answer = await client.get(original, { 'x-portcullis-jwt-assertion': 'forged' });
    assert.equal(answer.status, 200, answer.body);
    const echo = JSON.parse(answer.body) as { id: string; path: string; headers: Record<string, string> };
    assert.equal(echo.id, 'web-a');
    assert.equal(echo.path, '/page');
    const token = echo.headers['x-portcullis-jwt-assertion'];
    assert.ok(token !== undefined && token !== 'forged', `assertion: ${token}`);
    const jwks = await client.get(`${origin('app')}/.well-known/portcullis/jwks.json`);
    assert.equal(jwks.status, 200, jwks.body);
    const { payload } = await jwtVerify(token, createLocalJWKSet(JSON.parse(jwks.body) as JSONWebKeySet), {
      issuer: `app.localhost:${port}`,
      audience: `app.localhost:${port}`, // the port the client sent: assertions are port-specific
    });
    assert.equal(payload.email, 'alice@example.com');
    assert.equal(payload.sub, 'alice');

    // Signed in at the authenticate host, alice reaches the other route's sign-in flow and ends denied.
    let denied = await client.get(`${origin('staff')}/`);
    for (let hop = 0; hop < 6 && denied.status === 302; hop++)
      denied = await client.get(new URL(denied.headers.location ?? '', origin('staff')));
    assert.equal(denied.status, 403, denied.body);
    assert.ok(!denied.body.includes('"id":"web-a"'), denied.body);
  });

  it('under concurrent signed-in load: an annotation change, scaling up and down and a deleted Ingress fail no request', async (t) => {
    // Bounded loops of alice's requests to the admitted route, WORKERS at once, until the changes are done.
    const WORKERS = 4;
    let done = false;
    const failures: string[] = [];
    const answered: string[] = [];
    let sent = 0;
    const worker = async (): Promise<void> => {
      while (sent < 8_000 && !done) {
        sent++;
        const answer = await client.get(`${origin('app')}/load`).catch((err: Error) => err);
        if (answer instanceof Error) failures.push(answer.message);
        else if (answer.status !== 200) failures.push(`${answer.status} ${answer.body.slice(0, 200)}`);
        else answered.push((JSON.parse(answer.body) as { id: string }).id);
      }
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));
    const recentlyOnly = (id: string, count: number): boolean =>
      answered.length >= count && answered.slice(-count).every((seen) => seen === id);
    try {
      await waitFor(async () => sent >= 50, { what: 'the load to start', timeoutMs: 20_000 });
      // An annotation that leaves access alone; a 7s timeout shows in Envoy's route config.
      await cluster.admin.apply(
        ingress('app', 'app.localhost', { ...admitted.annotations, 'portcullis.dev/timeout': '7s' }),
      );
      await waitFor(
        async () =>
          (
            await (await fetch(`${replica.adminUrl}/config_dump?resource=dynamic_route_configs`)).text()
          ).includes('"7s"'),
        { what: 'the timeout annotation to reach Envoy', timeoutMs: 20_000 },
      );
      // Scale up: a second EndpointSlice of the Service.
      second = await testHost.startEcho('web-b');
      await cluster.admin.apply(endpointSlice('web-2', second.port, [testHost.address]));
      await waitFor(async () => answered.includes('web-b'), {
        what: 'the load to reach the second endpoint',
        timeoutMs: 20_000,
      });
      // Scale down as a rolling restart does: the first endpoint turns terminating (not ready, still
      // serving what it has) and takes no new request.
      const draining = endpointSlice('web-1', backend.port, [testHost.address]) as KubeObject & {
        endpoints: { conditions: Record<string, boolean> }[];
      };
      for (const endpoint of draining.endpoints)
        endpoint.conditions = { ready: false, serving: true, terminating: true };
      await cluster.admin.apply(draining);
      await waitFor(async () => recentlyOnly('web-b', 100), {
        what: 'the load to leave the terminating endpoint',
        timeoutMs: 20_000,
      });
      await cluster.admin.delete(ingressRef('staff'));
      await waitFor(async () => (await client.get(`${origin('staff')}/`)).status === 404, {
        what: 'the deleted Ingress to answer 404',
        timeoutMs: 20_000,
      });
      const mark = sent;
      await waitFor(async () => sent >= mark + 100, {
        what: 'more load after the last change',
        timeoutMs: 20_000,
      });
    } finally {
      done = true;
      await load;
    }
    const counts = answered.reduce<Record<string, number>>(
      (sofar, id) => ({ ...sofar, [id]: (sofar[id] ?? 0) + 1 }),
      {},
    );
    t.diagnostic(
      `${sent} requests by ${WORKERS} workers, ${failures.length} failed, answered by ${JSON.stringify(counts)}`,
    );
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${sent} requests failed`);
    assert.ok(sent >= 200, `only ${sent} requests were sent`);
    assert.ok((counts['web-a'] ?? 0) > 0 && (counts['web-b'] ?? 0) > 0, JSON.stringify(counts));
  });
});
