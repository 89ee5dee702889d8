// Routes made from Kubernetes objects (no API server: the objects as literals) through a real
// Envoy: Kubernetes's element-wise Prefix (/foo matches /foo, /foo/ and /foo/bar, never /foobar),
// an Exact path of another Ingress winning over the Prefix for exactly its path, a policy
// annotation that denies a signed-in user with 403, a public one, the prefix rewrite annotation,
// and EndpointSlice addresses and a named port as the destination.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { adaSession, proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { kubernetesRoutes } from '../../src/kubernetes/route-source.js';
import { ingress, input, path, service, slice } from '../unit/kubernetes/fixtures.js';

let web: EchoUpstream;
let admin: EchoUpstream;
let portcullis: TestPortcullis;
let cookie: string;

before(async () => {
  web = await startEchoUpstream({ id: 'web' });
  admin = await startEchoUpstream({ id: 'admin' });
  const source = kubernetesRoutes(
    input({
      ingresses: [
        ingress('app', [path('/foo', 'Prefix', 'web', 'http'), path('/v1', 'Prefix', 'web', 'http')], {
          host: 'k.test',
          created: '2026-01-01T00:00:00Z',
          annotations: { 'portcullis.dev/allow_public_unauthenticated_access': 'true' },
        }),
        ingress('rewrite', [path('/api', 'Prefix', 'web', 'http')], {
          host: 'k.test',
          annotations: {
            'portcullis.dev/allow_public_unauthenticated_access': 'true',
            'portcullis.dev/prefix_rewrite': '/v2',
          },
        }),
        ingress('admin', [path('/foo/admin', 'Exact', 'admin', 80)], {
          host: 'k.test',
          created: '2026-02-01T00:00:00Z',
          annotations: {
            'portcullis.dev/policy': 'allow:\n  or:\n    - email:\n        is: bob@example.com\n',
          },
        }),
      ],
      services: [service('web'), service('admin')],
      endpointSlices: [
        slice('web', [['127.0.0.1', true]], { name: 'http', port: web.port }),
        slice('admin', [['127.0.0.1', true]], { name: 'http', port: admin.port }),
      ],
    }),
  );
  assert.deepEqual(source.problems, []);
  portcullis = await startPortcullis({ routes: source.routes });
  const ada = adaSession();
  await portcullis.running.sessions.put(ada);
  cookie = `_portcullis=${portcullis.running.authorize.handles().issue(ada.id)}`;
});

after(async () => {
  await portcullis?.stop();
  await admin?.stop();
  await web?.stop();
});

async function reached(requestPath: string): Promise<string> {
  const response = await proxyRequest(portcullis.proxyPort, 'k.test', requestPath, { headers: { cookie } });
  if (response.status !== 200) return String(response.status);
  const echoed = response.json<{ id: string; path: string }>();
  return `${echoed.id} ${echoed.path}`;
}

test('Prefix is element-wise and an Exact path wins over it for exactly its path', async () => {
  assert.equal(await reached('/foo'), 'web /foo');
  assert.equal(await reached('/foo/'), 'web /foo/');
  assert.equal(await reached('/foo/bar'), 'web /foo/bar');
  assert.equal(await reached('/foobar'), '404');
  assert.equal(await reached('/foo/admin/'), 'web /foo/admin/');
  assert.equal(admin.requests, 0);
});

test("the policy annotation applies: the Exact path's policy denies ada with 403", async () => {
  assert.equal(await reached('/foo/admin'), '403');
  assert.equal(admin.requests, 0);
});

test('the prefix_rewrite annotation replaces the matched prefix element-wise', async () => {
  assert.equal(await reached('/api'), 'web /v2');
  assert.equal(await reached('/api/items'), 'web /v2/items');
  assert.equal(await reached('/apix'), '404');
});
