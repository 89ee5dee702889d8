// Ingresses -> route entries: class filtering, Kubernetes precedence as route order, element-wise
// Prefix matching, Service ports by number and name through EndpointSlices, zero ready endpoints,
// default backends, TLS Secrets, conflicts between objects, and problems naming the object.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kubernetesRoutes } from '../../../src/kubernetes/route-source.js';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { ingress, input, NGINX_CLASS, ourClass, path, service, slice, tlsSecret } from './fixtures.js';

/** `from` + matcher of each route, in order: what Envoy sees first to last. */
function matchers(routes: readonly Record<string, unknown>[]): string[] {
  return routes.map((route) => {
    const kind = ['path', 'prefix', 'regex'].find((key) => route[key] !== undefined) ?? '?';
    return `${String(route.from)} ${kind} ${String(route[kind])}`;
  });
}

test('only Ingresses of our class are read: by name, by the legacy annotation, or by default', () => {
  const paths = [path('/', 'Prefix')];
  const ours = ingress('ours', paths, { host: 'a.example.com' });
  const legacy = ingress('legacy', paths, {
    host: 'b.example.com',
    className: null,
    annotations: { 'kubernetes.io/ingress.class': 'portcullis' },
  });
  const unnamed = ingress('unnamed', paths, { host: 'c.example.com', className: null });
  const nginx = ingress('nginx', paths, { host: 'd.example.com', className: 'nginx' });
  const all = [ours, legacy, unnamed, nginx];
  const hosts = (routes: readonly Record<string, unknown>[]): string[] => [
    ...new Set(routes.map((route) => String(route.from))),
  ];
  const notDefault = kubernetesRoutes(input({ ingresses: all }));
  assert.deepEqual(notDefault.problems, []);
  assert.deepEqual(hosts(notDefault.routes), ['https://a.example.com', 'https://b.example.com']);
  const asDefault = kubernetesRoutes(
    input({ ingresses: all, ingressClasses: [ourClass(true), NGINX_CLASS] }),
  );
  assert.deepEqual(hosts(asDefault.routes), [
    'https://a.example.com',
    'https://b.example.com',
    'https://c.example.com',
  ]);
});

test('Prefix is element-wise: /foo becomes path /foo plus prefix /foo/, and / stays prefix /', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [ingress('app', [path('/foo', 'Prefix'), path('/bar/', 'Prefix'), path('/', 'Prefix')])],
    }),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(matchers(out.routes), [
    'https://shop.example.com path /bar',
    'https://shop.example.com path /foo',
    'https://shop.example.com prefix /bar/',
    'https://shop.example.com prefix /foo/',
    'https://shop.example.com prefix /',
  ]);
  // Nothing matches /foobar but the catch-all; ImplementationSpecific reads as Prefix.
  const implementation = kubernetesRoutes(
    input({ ingresses: [ingress('app', [path('/api', 'ImplementationSpecific')])] }),
  );
  assert.deepEqual(matchers(implementation.routes), [
    'https://shop.example.com path /api',
    'https://shop.example.com prefix /api/',
  ]);
});

test('routes are ordered as Kubernetes precedence says: exact paths first, then the longest prefix', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [
        ingress('short', [path('/', 'Prefix'), path('/a', 'Prefix')], { created: '2026-01-01T00:00:00Z' }),
        ingress('long', [path('/a/b/c', 'Prefix'), path('/a/b', 'Exact')], {
          created: '2026-01-02T00:00:00Z',
        }),
      ],
    }),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.skipped, []);
  assert.deepEqual(matchers(out.routes), [
    'https://shop.example.com path /a',
    'https://shop.example.com path /a/b',
    'https://shop.example.com path /a/b/c',
    'https://shop.example.com prefix /a/b/c/',
    'https://shop.example.com prefix /a/',
    'https://shop.example.com prefix /',
  ]);
  // The exact path and the prefix longer than /a keep their own Ingress.
  const exact = out.routes.findIndex((route) => route.path === '/a/b');
  assert.equal(out.routeOrigins[exact]?.object.name, 'long');
  assert.equal(out.routeOrigins[exact]?.where, 'spec.rules[0].http.paths[1]');
});

test('an Exact path wins over the exact half of an equal Prefix, whatever the age', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [
        ingress('prefix', [path('/docs', 'Prefix')], { created: '2026-01-01T00:00:00Z' }),
        ingress('exact', [path('/docs', 'Exact', 'web')], {
          created: '2026-03-01T00:00:00Z',
          annotations: { 'portcullis.dev/allowed_domains': 'example.com' },
        }),
      ],
    }),
  );
  assert.deepEqual(out.skipped, []);
  const exact = out.routes.find((route) => route.path === '/docs');
  assert.deepEqual(exact?.allowed_domains, ['example.com']);
  assert.ok(out.routes.some((route) => route.prefix === '/docs/'));
});

test('the same host and path in two Ingresses: the older keeps it, the newer is named and left out', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [
        ingress('newer', [path('/pay', 'Exact')], { created: '2026-05-01T00:00:00Z' }),
        ingress('older', [path('/pay', 'Exact')], { created: '2026-04-01T00:00:00Z' }),
      ],
    }),
  );
  assert.equal(out.routes.length, 1);
  assert.equal(out.routeOrigins[0]?.object.name, 'older');
  assert.deepEqual(out.skipped.map(formatObjectProblem), [
    'Ingress shop/newer: spec.rules[0].http.paths[0]: host shop.example.com path /pay is already served by Ingress shop/older (spec.rules[0].http.paths[0]), which is older or comes first; this path is left out',
  ]);
});

test('backends follow EndpointSlices: ready addresses only, the port by number or by name, IPv6 bracketed', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [ingress('app', [path('/v4', 'Exact', 'api', 'grpc'), path('/v6', 'Exact', 'six', 80)])],
      services: [
        service('api', [
          { name: 'metrics', port: 9090, targetPort: 9090 },
          { name: 'grpc', port: 81, targetPort: 'grpc', appProtocol: 'kubernetes.io/h2c' },
        ]),
        service('six', [{ port: 80, targetPort: 8080 }]),
      ],
      endpointSlices: [
        slice(
          'api',
          [
            ['10.2.0.9', true],
            ['10.2.0.7', true],
            ['10.2.0.8', false],
          ],
          { name: 'grpc', port: 50051 },
        ),
        slice('api', [['10.2.0.9', true]], { name: 'metrics', port: 9090 }),
        slice('six', [['fd00::5', true]], { port: 8080 }, 'IPv6'),
      ],
    }),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.routes.find((route) => route.path === '/v4')?.to, [
    'h2c://10.2.0.7:50051',
    'h2c://10.2.0.9:50051',
  ]);
  assert.deepEqual(out.routes.find((route) => route.path === '/v6')?.to, ['http://[fd00::5]:8080']);
});

test('a Service with no ready endpoint still has its route, with no destinations (503) and its options', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [
        ingress('app', [path('/', 'Prefix')], {
          annotations: {
            'portcullis.dev/allowed_users': '[ada@example.com]',
            'portcullis.dev/timeout': '5s',
          },
        }),
      ],
      endpointSlices: [slice('web', [['10.1.0.5', false]])],
    }),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.routes, [
    {
      from: 'https://shop.example.com',
      prefix: '/',
      to: [],
      allowed_users: ['ada@example.com'],
      timeout: '5s',
    },
  ]);
});

test('the default backend serves every host (last), and the Ingress hosts under paths no rule matches', () => {
  const app = ingress('app', [path('/api', 'Prefix')]);
  const withDefault = {
    ...app,
    spec: { ...app.spec, defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
  };
  const out = kubernetesRoutes(input({ ingresses: [withDefault] }));
  assert.deepEqual(out.problems, []);
  assert.deepEqual(matchers(out.routes), [
    'https://shop.example.com path /api',
    'https://shop.example.com prefix /api/',
    'https://shop.example.com prefix /',
    'https://* prefix /',
  ]);
  // A real `/` path on that host wins over the implied one, without a word.
  const other = ingress('root', [path('/', 'Prefix', 'web')], { created: '2027-01-01T00:00:00Z' });
  const both = kubernetesRoutes(input({ ingresses: [withDefault, other] }));
  assert.deepEqual(both.skipped, []);
  const root = both.routes.findIndex(
    (route) => route.from === 'https://shop.example.com' && route.prefix === '/',
  );
  assert.equal(both.routeOrigins[root]?.object.name, 'root');
});

test('TLS Secrets become certificates; a missing or wrong Secret is a problem on the Ingress', () => {
  const secret = tlsSecret('shop-tls');
  const out = kubernetesRoutes(
    input(
      {
        ingresses: [
          ingress('app', [path('/', 'Prefix')], {
            tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
          }),
        ],
      },
      [secret],
    ),
  );
  assert.deepEqual(out.problems, []);
  assert.equal(out.certificates.length, 1);
  assert.match(out.certificates[0]?.cert ?? '', /^-----BEGIN CERTIFICATE-----/);
  assert.deepEqual(out.certificateOrigins, [
    {
      object: { kind: 'Ingress', namespace: 'shop', name: 'app' },
      where: 'spec.tls[0].secretName (Secret shop/shop-tls)',
    },
  ]);
  const opaque = {
    metadata: { name: 'opaque', namespace: 'shop' },
    type: 'Opaque',
    data: { 'tls.crt': secret.data?.['tls.crt'] ?? '', 'tls.key': Buffer.from('hunter2').toString('base64') },
  };
  const bad = kubernetesRoutes(
    input(
      {
        ingresses: [
          ingress('app', [path('/', 'Prefix')], { tls: [{ secretName: 'gone' }, { secretName: 'opaque' }] }),
        ],
      },
      [opaque],
    ),
  );
  const messages = bad.problems.map(formatObjectProblem);
  assert.deepEqual(messages, [
    'Ingress shop/app: spec.tls[0].secretName: Secret shop/gone does not exist',
    'Ingress shop/app: spec.tls[1].secretName: Secret shop/opaque: tls.key is missing or not PEM',
  ]);
  assert.ok(!messages.join().includes('hunter2'), 'no Secret content in a problem');
});

test('bad backends, paths and hosts are problems naming the Ingress and the field', () => {
  const app = ingress('app', [
    path('/a', 'Prefix', 'missing'),
    path('/b', 'Prefix', 'web', 8443),
    path('/c', 'Prefix', 'web', 'https'),
    path('relative', 'Prefix'),
  ]);
  const out = kubernetesRoutes(
    input({ ingresses: [app, ingress('host', [path('/', 'Prefix')], { host: 'bad_host.example.com' })] }),
  );
  assert.deepEqual(out.problems.map(formatObjectProblem), [
    'Ingress shop/app: spec.rules[0].http.paths[0].backend: Service shop/missing does not exist',
    'Ingress shop/app: spec.rules[0].http.paths[1].backend: Service shop/web: has no port 8443 (it has 80 (http))',
    'Ingress shop/app: spec.rules[0].http.paths[2].backend: Service shop/web: has no port named "https" (it has 80 (http))',
    'Ingress shop/app: spec.rules[0].http.paths[3].path: must start with "/", got "relative"',
    'Ingress shop/host: spec.rules[0].host: "bad_host.example.com" is not a host name (a DNS name, optionally after "*.")',
  ]);
});

test('the same objects in any order give the same document: routes, certificates (oldest first), problems', () => {
  const objects = [
    ingress('a', [path('/x', 'Prefix'), path('/', 'Prefix')], {
      created: '2026-01-01T00:00:00Z',
      tls: [{ secretName: 'a-tls' }],
    }),
    ingress('b', [path('/y', 'Exact'), path('/z', 'Exact', 'gone')], {
      host: '*.example.com',
      created: '2026-01-02T00:00:00Z',
      tls: [{ secretName: 'b-tls' }],
    }),
    ingress('c', [path('/w', 'Exact', 'gone')], { host: 'c.example.com', created: '2026-01-03T00:00:00Z' }),
  ];
  const secrets = [tlsSecret('a-tls'), tlsSecret('b-tls', '*.example.com')];
  const forward = kubernetesRoutes(input({ ingresses: objects }, secrets));
  const backward = kubernetesRoutes(input({ ingresses: [...objects].reverse() }, secrets));
  assert.deepEqual(backward.routes, forward.routes);
  assert.deepEqual(backward.certificates, forward.certificates);
  assert.deepEqual(backward.problems, forward.problems);
  assert.deepEqual(
    backward.certificateOrigins.map((origin) => origin.object.name),
    ['a', 'b'],
  );
  assert.deepEqual(
    backward.problems.map((problem) => problem.object.name),
    ['b', 'c'],
  );
  assert.ok(forward.routes.some((route) => route.from === 'https://*.example.com'));
});

test('the prefix_rewrite annotation replaces the matched path prefix element-wise, as on a file route', () => {
  const out = kubernetesRoutes(
    input({
      ingresses: [
        ingress('app', [path('/api', 'Prefix'), path('/login', 'Exact')], {
          annotations: { 'portcullis.dev/prefix_rewrite': '/v2' },
        }),
      ],
    }),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(
    out.routes.map((route) => `${String(route.path ?? route.prefix)} -> ${String(route.prefix_rewrite)}`),
    ['/api -> /v2', '/login -> /v2', '/api/ -> /v2/'],
  );
});

test('a bad default backend is one problem, however many hosts it would serve', () => {
  const app = ingress('app', [path('/a', 'Exact')]);
  const broken = {
    ...app,
    spec: { ...app.spec, defaultBackend: { service: { name: 'gone', port: { number: 80 } } } },
  };
  const out = kubernetesRoutes(input({ ingresses: [broken] }));
  assert.deepEqual(out.problems.map(formatObjectProblem), [
    'Ingress shop/app: spec.defaultBackend: Service shop/gone does not exist',
  ]);
});
