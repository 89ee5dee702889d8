// Per-object isolation (last-accepted.ts) with the real desiredConfig: a problem object is replaced
// by its last accepted version (its routes as before, endpoints live) or left out when it never
// built, while every other object's change builds; a delete + re-create is a new object; a last
// accepted version that fails too is left out next round; a deleted TLS Secret is stood in for by
// the data the last served build read, for the objects that read it only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  desiredConfig,
  type ClusterState,
  type RouteObjects,
  type SecretObject,
} from '../../../src/kubernetes/cluster-state.js';
import {
  acceptedAfter,
  acceptedObjects,
  acceptedSecretNames,
  fateText,
  liveInputs,
  refKey,
  substituteProblemObjects,
  type AcceptedObjects,
  type Substitution,
} from '../../../src/kubernetes/last-accepted.js';
import type { Ingress } from '../../../src/kubernetes/objects.js';
import { input, ingress, path, service, slice, tlsSecret } from './fixtures.js';

const SETTINGS = {
  metadata: { name: 'global', generation: 3 },
  spec: { insecureServer: true, authenticate: { url: 'https://auth.example.com' } },
};
const PUBLIC = { 'portcullis.dev/allow_public_unauthenticated_access': 'true' };
const ANY_USER = { 'portcullis.dev/allow_any_authenticated_user': 'true' };
// A misspelled annotation: a problem the route source finds (validate finds others, the live tests).
const BAD = { 'portcullis.dev/polcy': 'x' };

function routesOf(extra: Parameters<typeof input>[0]): RouteObjects {
  const { secrets: _reader, ...routes } = input(extra);
  return routes;
}

/** `object` as a later version (the API server's resourceVersion moves on every change). */
function version(object: Ingress, resourceVersion: string): Ingress {
  return { ...object, metadata: { ...object.metadata, resourceVersion } };
}

/** Runs the rounds as the watcher does: desiredConfig, then substitution while problems remain. */
function rounds(
  routes: RouteObjects,
  secrets: ReadonlyMap<string, SecretObject | undefined>,
  accepted: AcceptedObjects,
): {
  readonly inputs: Substitution;
  readonly desired: ReturnType<typeof desiredConfig>;
  readonly count: number;
} {
  let inputs = liveInputs(routes, secrets);
  let count = 0;
  for (;;) {
    const state: ClusterState = {
      settings: SETTINGS,
      secrets: inputs.secrets,
      namespace: 'ns',
      routes: inputs.routes,
    };
    const desired = desiredConfig(state);
    const next = substituteProblemObjects(
      inputs,
      desired.routeProblems.map((p) => p.object),
      accepted,
    );
    if (next === undefined) return { inputs, desired, count };
    inputs = next;
    count++;
    assert.ok(count <= 2 * (routes.ingresses.length + routes.gateways.length) + 1, 'rounds are bounded');
  }
}

/** The route entries of `desired` by `from`, with their policy-bearing keys. */
function servedHosts(desired: ReturnType<typeof desiredConfig>): Record<string, unknown>[] {
  return (desired.document?.routes as Record<string, unknown>[]) ?? [];
}

test('a bad change to one Ingress: its last accepted version serves; the other Ingress changes', () => {
  const appV1 = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC });
  const blogV1 = ingress('blog', [path('/', 'Prefix')], { host: 'blog.example.com', annotations: PUBLIC });
  const accepted = acceptedObjects(routesOf({ ingresses: [appV1, blogV1] }), new Map());
  const appV2 = version(ingress('app', [path('/', 'Prefix')], { annotations: { ...PUBLIC, ...BAD } }), '200');
  const blogV2 = version(
    ingress('blog', [path('/', 'Prefix')], { host: 'blog.example.com', annotations: ANY_USER }),
    '201',
  );
  const { inputs, desired, count } = rounds(routesOf({ ingresses: [appV2, blogV2] }), new Map(), accepted);
  assert.equal(count, 1);
  assert.deepEqual(desired.routeProblems, []);
  assert.deepEqual(
    inputs.routes.ingresses.map((i) => [i.metadata.name, i.metadata.resourceVersion]),
    [
      ['app', '100'],
      ['blog', '201'],
    ],
  );
  const routes = servedHosts(desired);
  const app = routes.find((r) => r['from'] === 'https://shop.example.com');
  const blog = routes.find((r) => r['from'] === 'https://blog.example.com');
  assert.equal(app?.['allow_public_unauthenticated_access'], true, 'app: its last good routes');
  assert.equal(app?.['timeout'], undefined);
  assert.equal(blog?.['allow_any_authenticated_user'], true, "blog's change builds");
  assert.equal(inputs.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name: 'app' })), 'previous');
  assert.equal(fateText('previous'), 'its last good version keeps serving');
});

test('the last accepted version is translated against the live Services: endpoints follow', () => {
  const appV1 = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC });
  const accepted = acceptedObjects(routesOf({ ingresses: [appV1] }), new Map());
  const appV2 = version(ingress('app', [path('/', 'Prefix')], { annotations: BAD }), '200');
  const { desired } = rounds(
    routesOf({ ingresses: [appV2], endpointSlices: [slice('web', [['10.1.0.9', true]])] }),
    new Map(),
    accepted,
  );
  assert.deepEqual(servedHosts(desired)[0]?.['to'], ['http://10.1.0.9:8080']);
});

test('an object that never built is left out; so is a re-created one (a new uid)', () => {
  const appV1 = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC });
  const accepted = acceptedObjects(routesOf({ ingresses: [appV1] }), new Map());
  const recreated: Ingress = {
    ...ingress('app', [path('/', 'Prefix')], { annotations: BAD }),
    metadata: { ...version(appV1, '300').metadata, annotations: BAD, uid: 'uid-app-2' },
  };
  const fresh = ingress('new', [path('/', 'Prefix')], { host: 'new.example.com', annotations: BAD });
  const { inputs, desired } = rounds(routesOf({ ingresses: [recreated, fresh] }), new Map(), accepted);
  assert.deepEqual(inputs.routes.ingresses, []);
  assert.deepEqual(servedHosts(desired), []);
  assert.equal(inputs.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name: 'app' })), 'never-built');
  assert.equal(inputs.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name: 'new' })), 'never-built');
  assert.equal(fateText('never-built'), 'left out: it never built');
});

test('a last accepted version that fails too (its Service is gone) is left out in the next round', () => {
  const appV1 = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC });
  const blog = ingress('blog', [path('/', 'Prefix', 'blog')], {
    host: 'blog.example.com',
    annotations: PUBLIC,
  });
  const accepted = acceptedObjects(routesOf({ ingresses: [appV1, blog] }), new Map());
  const appV2 = version(ingress('app', [path('/', 'Prefix')], { annotations: BAD }), '200');
  const { inputs, desired, count } = rounds(
    routesOf({
      ingresses: [appV2, blog],
      services: [service('blog')],
      endpointSlices: [slice('blog', [['10.2.0.1', true]])],
    }),
    new Map(),
    accepted,
  );
  assert.equal(count, 2);
  assert.deepEqual(
    inputs.routes.ingresses.map((i) => i.metadata.name),
    ['blog'],
  );
  assert.equal(servedHosts(desired).length, 1);
  assert.equal(
    inputs.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name: 'app' })),
    'previous-fails',
  );
});

test('a deleted TLS Secret: the data the last served build read stands in, for the objects that read it only', () => {
  const tls = { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] };
  const app = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC, ...tls });
  const secret = tlsSecret('shop-tls');
  const accepted = acceptedObjects(routesOf({ ingresses: [app] }), new Map([['shop/shop-tls', secret]]));
  assert.deepEqual(acceptedSecretNames(accepted), [{ namespace: 'shop', name: 'shop-tls' }]);
  // A new Ingress naming the same (deleted) Secret never had it: left out, never served with it.
  const other = ingress('other', [path('/', 'Prefix')], {
    host: 'other.example.com',
    annotations: PUBLIC,
    tls: [{ hosts: ['other.example.com'], secretName: 'shop-tls' }],
  });
  const live = new Map<string, SecretObject | undefined>([['shop/shop-tls', undefined]]);
  const { inputs, desired } = rounds(routesOf({ ingresses: [app, other] }), live, accepted);
  assert.deepEqual(desired.routeProblems, []);
  assert.deepEqual(
    inputs.routes.ingresses.map((i) => i.metadata.name),
    ['app'],
  );
  assert.equal(inputs.secrets.get('shop/shop-tls'), secret, 'the last served data stands in');
  assert.equal(live.get('shop/shop-tls'), undefined, 'the live map is not changed');
  const certificates = desired.document?.certificates as { cert: string }[];
  assert.equal(certificates.length, 1);
  assert.equal(certificates[0]?.cert, Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString());
  // The build that serves records the stand-in, so the next pass stands in the same way.
  const next = acceptedObjects(inputs.routes, inputs.secrets);
  assert.equal([...next.values()][0]?.secrets.get('shop/shop-tls')?.secret, secret);
});

test('a Secret that exists but is broken gets no stand-in: the object is left out', () => {
  const tls = { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] };
  const app = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC, ...tls });
  const accepted = acceptedObjects(
    routesOf({ ingresses: [app] }),
    new Map([['shop/shop-tls', tlsSecret('shop-tls')]]),
  );
  const broken: SecretObject = {
    metadata: { name: 'shop-tls', namespace: 'shop' },
    data: { 'tls.crt': 'eA==' },
  };
  const { inputs } = rounds(routesOf({ ingresses: [app] }), new Map([['shop/shop-tls', broken]]), accepted);
  assert.deepEqual(inputs.routes.ingresses, []);
  assert.equal(
    inputs.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name: 'app' })),
    'previous-fails',
  );
});

test('accepted versions cover only the objects of the build that served; no problem named changes nothing', () => {
  const app = ingress('app', [path('/', 'Prefix')]);
  const accepted = acceptedObjects(routesOf({ ingresses: [app] }), new Map());
  assert.equal(accepted.size, 1);
  assert.equal(acceptedObjects(routesOf({}), new Map()).size, 0, 'a deleted object drops out');
  const inputs = liveInputs(routesOf({ ingresses: [app] }), new Map());
  assert.equal(substituteProblemObjects(inputs, [], accepted), undefined);
  assert.equal(
    substituteProblemObjects(inputs, [{ kind: 'Ingress', namespace: 'shop', name: 'gone' }], accepted),
    undefined,
    'an object not in the build',
  );
  assert.equal(
    substituteProblemObjects(inputs, [{ kind: 'Service', namespace: 'shop', name: 'web' }], accepted),
    undefined,
    'not a route object',
  );
});

test('a last good version that failed (its Service briefly gone) serves again once the Service is back', () => {
  const appV1 = ingress('app', [path('/', 'Prefix')], { annotations: PUBLIC });
  let accepted = acceptedObjects(routesOf({ ingresses: [appV1] }), new Map());
  const appV2 = version(ingress('app', [path('/', 'Prefix')], { annotations: BAD }), '200');
  const key = refKey({ kind: 'Ingress', namespace: 'shop', name: 'app' });
  // Pass 1: the live version has a typo and the Service `web` its last good version routes to is gone.
  const gone = routesOf({ ingresses: [appV2], services: [], endpointSlices: [] });
  const first = rounds(gone, new Map(), accepted);
  assert.equal(first.inputs.fates.get(key), 'previous-fails');
  assert.deepEqual(first.inputs.routes.ingresses, []);
  // What the watcher keeps after that build served: the object still exists, so its entry stays.
  accepted = acceptedAfter(first.inputs.routes, first.inputs.secrets, gone, accepted);
  assert.equal(accepted.size, 1);
  assert.equal([...accepted.values()][0]?.object, appV1);
  // Pass 2: the Service is back; the last good version serves again (the typo is still there).
  const back = routesOf({ ingresses: [appV2] });
  const second = rounds(back, new Map(), accepted);
  assert.equal(second.inputs.fates.get(key), 'previous');
  assert.equal(servedHosts(second.desired)[0]?.['allow_public_unauthenticated_access'], true);
  // Deleted, or re-created (a new uid): the carried entry drops out.
  assert.equal(acceptedAfter(routesOf({}), new Map(), routesOf({}), accepted).size, 0);
  const recreated = { ...appV2, metadata: { ...appV2.metadata, uid: 'uid-app-2' } };
  const again = routesOf({ ingresses: [recreated] });
  assert.equal(acceptedAfter(routesOf({}), new Map(), again, accepted).size, 0);
});
