// desiredConfig with the route source's objects: routes after the settings' own, the TLS Secrets
// the routes read become Secrets to follow, problems in route objects are kept apart (not built),
// and an EndpointSlice change touches only `to`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  desiredConfig,
  type ClusterState,
  type SecretObject,
} from '../../../src/kubernetes/cluster-state.js';
import { input, ingress, path, slice, tlsSecret } from './fixtures.js';

const SETTINGS = {
  metadata: { name: 'global', generation: 3 },
  spec: { insecureServer: true, authenticate: { url: 'https://auth.example.com' } },
};

function state(
  extra: Parameters<typeof input>[0],
  secrets: [string, SecretObject | undefined][] = [],
): ClusterState {
  const { secrets: _reader, ...routes } = input(extra);
  return { settings: SETTINGS, secrets: new Map(secrets), namespace: 'ns', routes };
}

test('routes from Ingress join the settings document; another class adds nothing', () => {
  const desired = desiredConfig(
    state({
      ingresses: [
        ingress('app', [path('/', 'Prefix')]),
        ingress('x', [path('/', 'Prefix')], { className: 'nginx', host: 'x.example.com' }),
      ],
    }),
  );
  assert.deepEqual(desired.routeProblems, []);
  const routes = desired.document?.routes as { from: string; to: string[] }[];
  assert.deepEqual(
    routes.map((route) => route.from),
    ['https://shop.example.com'],
  );
  assert.deepEqual(routes[0]?.to, ['http://10.1.0.5:8080', 'http://10.1.0.6:8080']);
  assert.ok(desired.origins !== undefined);
});

test('a TLS Secret an Ingress names is followed; until read it is a problem of that Ingress', () => {
  const app = ingress('app', [path('/', 'Prefix')], {
    tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
  });
  const waiting = desiredConfig(state({ ingresses: [app] }));
  assert.deepEqual(waiting.secrets, [{ namespace: 'shop', name: 'shop-tls' }]);
  assert.equal(waiting.routeProblems[0]?.object.name, 'app');
  const read = desiredConfig(state({ ingresses: [app] }, [['shop/shop-tls', tlsSecret('shop-tls')]]));
  assert.deepEqual(read.routeProblems, []);
  assert.equal((read.document?.certificates as unknown[]).length, 1);
});

test('a bad annotation is a route problem naming the Ingress; a new endpoint changes only `to`', () => {
  const bad = desiredConfig(
    state({
      ingresses: [ingress('app', [path('/', 'Prefix')], { annotations: { 'portcullis.dev/polcy': 'x' } })],
    }),
  );
  assert.match(bad.routeProblems[0]?.where ?? '', /portcullis\.dev\/polcy/);
  assert.match(bad.routeProblems[0]?.message ?? '', /did you mean portcullis\.dev\/policy/);
  assert.equal(bad.routeProblems[0]?.object.kind, 'Ingress');
  const one = desiredConfig(state({ ingresses: [ingress('app', [path('/', 'Prefix')])] }));
  const two = desiredConfig(
    state({
      ingresses: [ingress('app', [path('/', 'Prefix')])],
      endpointSlices: [
        slice('web', [
          ['10.1.0.5', true],
          ['10.1.0.6', true],
          ['10.1.0.7', true],
        ]),
      ],
    }),
  );
  const strip = (routes: unknown) =>
    (routes as Record<string, unknown>[]).map(({ to: _to, ...rest }) => rest);
  assert.deepEqual(strip(two.document?.routes), strip(one.document?.routes));
  assert.notDeepEqual(two.document?.routes, one.document?.routes);
});
