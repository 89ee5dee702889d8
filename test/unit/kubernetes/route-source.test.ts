// The route source's document through the real pipeline stages: parseConfig accepts it as it
// would a file (and translate finds no shadowed route, so the order is right), and parseConfig's
// problems in Kubernetes routes or certificates map back to the object and annotation.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import {
  attributeProblems,
  kubernetesRoutes,
  withKubernetesRoutes,
  type RouteSourceOutput,
} from '../../../src/kubernetes/route-source.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { gateway, httpRoute, ingress, input, path, service, slice, tlsSecret } from './fixtures.js';

/** The settings part of the document: plain HTTP, sign-in, and one route from a file. */
const SETTINGS = {
  ...SIGN_IN,
  insecure_server: true,
  address: ':8080',
  routes: [
    { from: 'https://file.example.com', to: 'http://10.0.0.1:8080', allow_any_authenticated_user: true },
  ],
};

function parseWith(
  source: RouteSourceOutput,
): ReturnType<typeof parseConfig> & { origins: ReturnType<typeof withKubernetesRoutes>['origins'] } {
  const { document, origins } = withKubernetesRoutes(SETTINGS, source);
  return {
    ...parseConfig({
      document,
      env: {},
      readText: () => {
        throw new Error('no files');
      },
    }),
    origins,
  };
}

test('Ingresses and HTTPRoutes together give a document parseConfig and translate accept', () => {
  const source = kubernetesRoutes(
    input(
      {
        ingresses: [
          ingress(
            'shop',
            [
              path('/', 'Prefix'),
              path('/admin', 'Prefix'),
              path('/admin/login', 'Exact'),
              path('/cart', 'Prefix', 'cart'),
            ],
            {
              annotations: {
                'portcullis.dev/allowed_domains': '[example.com]',
                'portcullis.dev/pass_identity_headers': 'true',
                'portcullis.dev/timeout': '45s',
                'portcullis.dev/set_request_headers': 'X-Shop: main',
              },
              tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
            },
          ),
          ingress('admin', [path('/admin/reports', 'Prefix')], {
            created: '2026-06-01T00:00:00Z',
            annotations: {
              'portcullis.dev/policy': 'allow:\n  or:\n    - email:\n        is: ada@example.com\n',
            },
          }),
          ingress('public', [path('/', 'Prefix')], {
            host: 'status.example.com',
            annotations: { 'portcullis.dev/allow_public_unauthenticated_access': 'true' },
          }),
        ],
        services: [service('web'), service('cart')],
        endpointSlices: [
          slice('web', [
            ['10.1.0.5', true],
            ['10.1.0.6', true],
          ]),
          slice('cart', []),
        ],
        gateways: [gateway([{ name: 'http', port: 80, protocol: 'HTTP' }])],
        httpRoutes: [
          httpRoute(
            'api',
            {
              hostnames: ['api.example.com'],
              rules: [
                {
                  matches: [{ path: { type: 'RegularExpression', value: '/v[0-9]+/items' } }],
                  backendRefs: [{ name: 'web', port: 80 }],
                },
                {
                  matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
                  backendRefs: [{ name: 'web', port: 80 }],
                },
              ],
            },
            { 'portcullis.dev/allow_any_authenticated_user': 'true' },
          ),
        ],
      },
      [tlsSecret('shop-tls')],
    ),
  );
  assert.deepEqual(source.problems, []);
  const parsed = parseWith(source);
  assert.deepEqual(parsed.problems, []);
  // The cart Service has no ready endpoint: its route has no destinations, and the warning says
  // so in the Ingress's words.
  assert.deepEqual(attributeProblems(parsed.warnings, parsed.origins).objects.map(formatObjectProblem), [
    'Ingress shop/shop: spec.rules[0].http.paths[3].backend (Service shop/cart): has no destinations: the route answers 503 (no healthy upstream) until it has some',
  ]);
  assert.ok(parsed.config);
  assert.equal(parsed.config.routes.length, 1 + source.routes.length);
  assert.equal(parsed.config.certificates.length, 1);
  const translated = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.deepEqual(translated.problems, [], 'no route shadows another');
  assert.ok(translated.ir);
});

test("a bad policy annotation's parseConfig problem names the Ingress and the annotation", () => {
  const source = kubernetesRoutes(
    input({
      ingresses: [
        ingress('ok', [path('/', 'Prefix')], {
          host: 'a.example.com',
          annotations: { 'portcullis.dev/allow_any_authenticated_user': 'true' },
        }),
        ingress('bad', [path('/x', 'Exact')], {
          host: 'b.example.com',
          annotations: {
            'portcullis.dev/policy': 'allow:\n  and:\n    - emial:\n        is: ada@example.com\n',
            'portcullis.dev/set_request_headers': '[a, b]',
          },
        }),
      ],
    }),
  );
  assert.deepEqual(source.problems, []);
  const parsed = parseWith(source);
  assert.equal(parsed.config, undefined);
  const { objects, global } = attributeProblems(parsed.problems, parsed.origins);
  assert.deepEqual(global, []);
  const messages = objects.map(formatObjectProblem);
  assert.ok(messages.length >= 2, messages.join('\n'));
  assert.ok(
    messages.includes(
      'Ingress shop/bad: annotation portcullis.dev/policy: allow.and[0]: unknown policy criterion: emial (did you mean email?)',
    ),
    messages.join('\n'),
  );
  assert.match(
    messages.find((text) => text.includes('set_request_headers')) ?? '',
    /^Ingress shop\/bad: annotation portcullis\.dev\/set_request_headers: /,
  );
  assert.ok(
    messages.every((text) => text.startsWith('Ingress shop/bad: ')),
    messages.join('\n'),
  );
});

test("a certificate parseConfig refuses maps back to the Ingress's tls entry and Secret", () => {
  const good = tlsSecret('shop-tls');
  const other = tlsSecret('other-tls');
  // The key of another certificate: parseConfig refuses the pair at certificates[i].key.
  const mismatched = {
    ...good,
    data: { 'tls.crt': good.data?.['tls.crt'] ?? '', 'tls.key': other.data?.['tls.key'] ?? '' },
  };
  const source = kubernetesRoutes(
    input({ ingresses: [ingress('app', [path('/', 'Prefix')], { tls: [{ secretName: 'shop-tls' }] })] }, [
      mismatched,
    ]),
  );
  const parsed = parseWith(source);
  const { objects } = attributeProblems(parsed.problems, parsed.origins);
  assert.equal(objects.length, 1, parsed.problems.map((problem) => problem.path).join());
  assert.equal(objects[0]?.where, 'spec.tls[0].secretName (Secret shop/shop-tls)');
  assert.equal(objects[0]?.object.name, 'app');
});

test('scaling a Service from zero keeps the route and its cluster: only the endpoints change', () => {
  const at = (addresses: readonly (readonly [string, boolean])[]) => {
    const source = kubernetesRoutes(
      input({
        ingresses: [
          ingress('app', [path('/', 'Prefix')], {
            annotations: { 'portcullis.dev/allowed_domains': 'example.com' },
          }),
        ],
        endpointSlices: [slice('web', addresses)],
      }),
    );
    const parsed = parseWith(source);
    assert.ok(parsed.config, parsed.problems.map((problem) => problem.message).join());
    const ir = translate(parsed.config, { systemCaFile: '/ca.pem' }).ir;
    assert.ok(ir);
    const route = ir.virtualHosts
      .flatMap((host) => host.routes)
      .find((candidate) => candidate.sourcePath === 'routes[1]');
    assert.ok(route, 'the Kubernetes route is there');
    const cluster = ir.clusters.find((candidate) => candidate.name === route.clusterName);
    assert.ok(cluster);
    return { routeId: route.id, cluster };
  };
  const none = at([['10.1.0.5', false]]);
  const two = at([
    ['10.1.0.5', true],
    ['10.1.0.6', true],
  ]);
  assert.equal(two.routeId, none.routeId);
  assert.equal(none.cluster.discovery, 'EDS');
  assert.deepEqual(none.cluster.endpoints, []);
  assert.deepEqual(
    { ...two.cluster, endpoints: [] },
    none.cluster,
    'the same cluster, endpoints aside (EDS)',
  );
  assert.deepEqual(
    two.cluster.endpoints.map((endpoint) => endpoint.host),
    ['10.1.0.5', '10.1.0.6'],
  );
});

test("translate's problems map back too, naming Kubernetes routes by object and file routes by key path", () => {
  const source = kubernetesRoutes(
    input({ ingresses: [ingress('app', [path('/api', 'Exact')], { host: 'file.example.com' })] }),
  );
  const parsed = parseWith(source);
  assert.ok(parsed.config, parsed.problems.map((problem) => problem.message).join());
  const translated = translate(parsed.config, { systemCaFile: '/ca.pem' });
  const { objects, global } = attributeProblems(translated.problems, parsed.origins);
  assert.deepEqual(global, []);
  assert.equal(objects.length, 1);
  assert.equal(objects[0]?.where, 'spec.rules[0].http.paths[0]');
  assert.match(objects[0]?.message ?? '', /^never matches: routes\[0\] comes first/);
  // A Kubernetes route named in a message is named by its object.
  const named = attributeProblems(
    [{ path: 'routes[1]', message: 'never matches: routes[1] comes first' }],
    parsed.origins,
  );
  assert.equal(
    named.objects[0]?.message,
    'never matches: Ingress shop/app (spec.rules[0].http.paths[0]) comes first',
  );
});

test('creation times order alike whether an object came as text (a watch event) or a Date (a typed list)', () => {
  const older = ingress('older', [path('/', 'Prefix')], { created: '2026-01-01T00:00:00Z' });
  const newer = ingress('newer', [path('/', 'Prefix')], { created: '2026-01-01T00:00:01Z' });
  // client-node's typed list gives the newer object's time as a Date; the older one came by watch, as text.
  const asDate = {
    ...newer,
    metadata: { ...newer.metadata, creationTimestamp: new Date('2026-01-01T00:00:01Z') },
  } as unknown as typeof newer;
  for (const ingresses of [
    [older, asDate],
    [asDate, older],
  ]) {
    const out = kubernetesRoutes(input({ ingresses }));
    assert.equal(out.routes.length, 1);
    assert.equal(out.routeOrigins[0]?.object.name, 'older', 'the older object keeps the path');
    assert.match(
      out.skipped.map(formatObjectProblem).join('\n'),
      /Ingress shop\/newer: .*already served by Ingress shop\/older/,
    );
  }
});
