// HTTPRoutes on our Gateways -> route entries: attachment through parentRefs and listeners,
// hostname intersection, path match types, weighted backends split per endpoint, filters, and the
// problems for what Portcullis routes cannot express (header matches, cross-namespace backends).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { kubernetesRoutes } from '../../../src/kubernetes/route-source.js';
import { gateway, httpRoute, httpsListener, input, service, slice, tlsSecret } from './fixtures.js';

const BACKEND = { backendRefs: [{ name: 'web', port: 80 }] };

test('a route attaches to our Gateway: hostnames intersect the listener, other parents are ignored', () => {
  const out = kubernetesRoutes(
    input(
      {
        gateways: [
          gateway(),
          {
            ...gateway(),
            metadata: { name: 'theirs', namespace: 'shop' },
            spec: { gatewayClassName: 'istio', listeners: [httpsListener()] },
          },
        ],
        httpRoutes: [
          httpRoute('store', { hostnames: ['store.example.com', 'store.other.org'], rules: [BACKEND] }),
          httpRoute('elsewhere', {
            parentRefs: [{ name: 'theirs' }],
            hostnames: ['x.example.com'],
            rules: [BACKEND],
          }),
          httpRoute('any', {
            rules: [{ matches: [{ path: { type: 'Exact', value: '/health' } }], ...BACKEND }],
          }),
        ],
      },
      [tlsSecret('edge-tls', '*.example.com')],
    ),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(
    out.routes.map((route) => `${String(route.from)} ${String(route.path ?? route.prefix)}`),
    ['https://*.example.com /health', 'https://store.example.com /'],
  );
  assert.equal(out.certificates.length, 1);
  assert.equal(
    out.certificateOrigins[0]?.where,
    'spec.listeners[0].tls.certificateRefs[0] (Secret shop/edge-tls)',
  );
});

test('sectionName, port and allowedRoutes narrow the listeners; a route no listener takes is a problem', () => {
  const http = { name: 'http', port: 80, protocol: 'HTTP', hostname: 'plain.example.com' };
  const out = kubernetesRoutes(
    input({
      gateways: [gateway([http, { ...httpsListener(), allowedRoutes: { namespaces: { from: 'Same' } } }])],
      httpRoutes: [
        httpRoute('plain', { parentRefs: [{ name: 'edge', sectionName: 'http' }], rules: [BACKEND] }),
        httpRoute('wrong-port', { parentRefs: [{ name: 'edge', port: 8443 }], rules: [BACKEND] }),
        {
          ...httpRoute('foreign', { parentRefs: [{ name: 'edge', namespace: 'shop' }], rules: [BACKEND] }),
          metadata: { name: 'foreign', namespace: 'other' },
        },
      ],
    }),
  );
  assert.deepEqual(
    out.routes.map((route) => route.from),
    ['https://plain.example.com'],
  );
  assert.deepEqual(out.problems.map(formatObjectProblem), [
    'Gateway shop/edge: spec.listeners[1].tls.certificateRefs[0]: Secret shop/edge-tls does not exist',
    'HTTPRoute shop/wrong-port: spec.parentRefs: no listener of the Gateway accepts this route (sectionName, port, allowedRoutes)',
    'HTTPRoute other/foreign: spec.parentRefs: no listener of the Gateway accepts this route (sectionName, port, allowedRoutes)',
  ]);
});

test('weights split per endpoint, so each Service gets its share whatever its endpoint count', () => {
  const out = kubernetesRoutes(
    input({
      gateways: [gateway([{ name: 'http', port: 80, protocol: 'HTTP' }])],
      services: [service('web'), service('canary')],
      endpointSlices: [
        slice('web', [
          ['10.1.0.5', true],
          ['10.1.0.6', true],
          ['10.1.0.7', true],
        ]),
        slice('canary', [['10.9.0.1', true]]),
      ],
      httpRoutes: [
        httpRoute('split', {
          hostnames: ['shop.example.com'],
          rules: [
            {
              backendRefs: [
                { name: 'web', port: 80, weight: 90 },
                { name: 'canary', port: 80, weight: 10 },
              ],
            },
          ],
        }),
      ],
    }),
  );
  assert.deepEqual(out.problems, []);
  // web: 90 * lcm(3, 1) / 3 = 90 per endpoint (270 in all); canary: 10 * 3 / 1 = 30; 9 to 1.
  assert.deepEqual(out.routes[0]?.to, [
    'http://10.1.0.5:8080,90',
    'http://10.1.0.6:8080,90',
    'http://10.1.0.7:8080,90',
    'http://10.9.0.1:8080,30',
  ]);
});

test('a backend with no ready endpoints takes no share; weight 0 takes none; none left is to: [] (503)', () => {
  const base = {
    gateways: [gateway([{ name: 'http', port: 80, protocol: 'HTTP' }])],
    services: [service('web'), service('canary')],
    endpointSlices: [slice('web', [['10.1.0.5', true]]), slice('canary', [['10.9.0.1', false]])],
  };
  const rule = {
    backendRefs: [
      { name: 'web', port: 80, weight: 1 },
      { name: 'canary', port: 80, weight: 1 },
    ],
  };
  const one = kubernetesRoutes(
    input({ ...base, httpRoutes: [httpRoute('r', { hostnames: ['a.example.com'], rules: [rule] })] }),
  );
  assert.deepEqual(one.routes[0]?.to, ['http://10.1.0.5:8080']);
  const off = {
    backendRefs: [
      { name: 'web', port: 80, weight: 0 },
      { name: 'canary', port: 80 },
    ],
  };
  const none = kubernetesRoutes(
    input({ ...base, httpRoutes: [httpRoute('r', { hostnames: ['a.example.com'], rules: [off] })] }),
  );
  assert.deepEqual(none.routes[0]?.to, []);
});

test('filters map to route keys; ReplacePrefixMatch rewrites each half of the element-wise prefix', () => {
  const out = kubernetesRoutes(
    input({
      gateways: [gateway([{ name: 'http', port: 80, protocol: 'HTTP' }])],
      httpRoutes: [
        httpRoute('filters', {
          hostnames: ['shop.example.com'],
          rules: [
            {
              matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
              filters: [
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'X-Team', value: 'pay' }], remove: ['X-Debug'] },
                },
                {
                  type: 'URLRewrite',
                  urlRewrite: {
                    hostname: 'internal.shop',
                    path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' },
                  },
                },
              ],
              ...BACKEND,
            },
            {
              matches: [{ path: { type: 'Exact', value: '/moved' } }],
              filters: [
                {
                  type: 'RequestRedirect',
                  requestRedirect: { hostname: 'new.example.com', statusCode: 301 },
                },
              ],
            },
          ],
        }),
      ],
    }),
  );
  assert.deepEqual(out.problems, []);
  const common = {
    set_request_headers: { 'X-Team': 'pay' },
    remove_request_headers: ['X-Debug'],
    host_rewrite: 'internal.shop',
  };
  assert.deepEqual(
    out.routes.find((route) => route.path === '/old'),
    {
      from: 'https://shop.example.com',
      path: '/old',
      to: ['http://10.1.0.5:8080', 'http://10.1.0.6:8080'],
      ...common,
      prefix_rewrite: '/new',
    },
  );
  assert.equal(out.routes.find((route) => route.prefix === '/old/')?.prefix_rewrite, '/new/');
  assert.deepEqual(out.routes.find((route) => route.path === '/moved')?.redirect, {
    host_redirect: 'new.example.com',
    response_code: 301,
  });
});

test('what Portcullis routes cannot express is a problem naming the HTTPRoute and the field', () => {
  const out = kubernetesRoutes(
    input({
      gateways: [
        gateway([
          { name: 'http', port: 80, protocol: 'HTTP' },
          { name: 'tcp', port: 5432, protocol: 'TCP' },
        ]),
      ],
      httpRoutes: [
        httpRoute('bad', {
          hostnames: ['shop.example.com'],
          rules: [
            { matches: [{ headers: [{ name: 'X-Canary', value: '1' }] }], ...BACKEND },
            { backendRefs: [{ name: 'web', namespace: 'other', port: 80 }] },
            { filters: [{ type: 'RequestMirror' }], ...BACKEND },
            {
              filters: [
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'X-Token', value: '${portcullis.access_token}' }] },
                },
              ],
              ...BACKEND,
            },
            { filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https' } }], ...BACKEND },
          ],
        }),
      ],
    }),
  );
  assert.deepEqual(out.problems.map(formatObjectProblem), [
    'Gateway shop/edge: spec.listeners[1].protocol: TCP listeners are not supported; use HTTP or HTTPS',
    'HTTPRoute shop/bad: spec.rules[0].matches[0].headers: headers matches are not supported: Portcullis routes match on host and path only',
    'HTTPRoute shop/bad: spec.rules[1].backendRefs[0]: Service other/web is in another namespace; cross-namespace backends are refused (ReferenceGrant is not supported)',
    'HTTPRoute shop/bad: spec.rules[2].filters[0].type: RequestMirror filters are not supported',
    "HTTPRoute shop/bad: spec.rules[3].filters[0].requestHeaderModifier.set: X-Token: sends the signed-in user's identity-provider token upstream, which a Kubernetes object may not do (anyone who can write it would receive every visitor's tokens); give such a route in the config file",
    'HTTPRoute shop/bad: spec.rules[4].backendRefs: a rule with a RequestRedirect filter answers with the redirect; remove its backendRefs',
  ]);
  assert.deepEqual(out.routes, [], 'a rule with a problem gives no route');
});

test('an option set by both an annotation and a filter is a problem naming the annotation', () => {
  const out = kubernetesRoutes(
    input({
      gateways: [gateway([{ name: 'http', port: 80, protocol: 'HTTP' }])],
      httpRoutes: [
        httpRoute(
          'both',
          {
            hostnames: ['shop.example.com'],
            rules: [
              {
                filters: [
                  {
                    type: 'URLRewrite',
                    urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/b' } },
                  },
                ],
                ...BACKEND,
              },
            ],
          },
          { 'portcullis.dev/prefix_rewrite': '/a' },
        ),
      ],
    }),
  );
  assert.deepEqual(out.problems.map(formatObjectProblem), [
    'HTTPRoute shop/both: annotation portcullis.dev/prefix_rewrite: prefix_rewrite is also set by a filter of spec.rules[0]; keep one of them',
  ]);
});
