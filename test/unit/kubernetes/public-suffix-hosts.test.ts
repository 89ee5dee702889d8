// A wildcard over a public suffix (`*.com`, `*.co.uk`, `*.github.io`, or a single label such as
// `*.internal`) names no one's site, and with host ownership it would claim every future host
// under it for one namespace: Ingress hosts, HTTPRoute hostnames and listener hostnames refuse it,
// naming the field, and such a host claims nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveHostClaims } from '../../../src/kubernetes/host-claims.js';
import { hostProblem } from '../../../src/kubernetes/hosts.js';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { kubernetesRoutes } from '../../../src/kubernetes/route-source.js';
import { gateway, httpRoute, ingress, input, path } from './fixtures.js';

const OPEN_LISTENER = { name: 'http', port: 80, protocol: 'HTTP' };

test('hostProblem refuses a wildcard over a public suffix and keeps a domain of its own', () => {
  for (const host of ['*.com', '*.co.uk', '*.github.io', '*.internal'])
    assert.match(hostProblem(host) ?? '', /is a wildcard over the public suffix/, host);
  assert.match(hostProblem('*.co.uk') ?? '', /name a domain of your own \(\*\.example\.co\.uk\)/);
  for (const host of ['*.example.com', 'example.com', '*.svc.cluster.local', 'shop.example.co.uk'])
    assert.equal(hostProblem(host), undefined, host);
});

test('an Ingress host or an HTTPRoute hostname over a public suffix is a problem, serves nothing and claims nothing', () => {
  const objects = input({
    ingresses: [
      ingress('wide', [path('/', 'Prefix')], { host: '*.com' }),
      ingress('fine', [path('/', 'Prefix')], { host: 'fine.example.com' }),
    ],
    gateways: [gateway([OPEN_LISTENER])],
    httpRoutes: [
      httpRoute('wide-route', {
        hostnames: ['*.co.uk'],
        rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
      }),
    ],
  });
  const out = kubernetesRoutes(objects);
  const messages = out.problems.map(formatObjectProblem);
  assert.ok(
    messages.some((m) =>
      m.startsWith('Ingress shop/wide: spec.rules[0].host: "*.com" is a wildcard over the public suffix com'),
    ),
    messages.join('\n'),
  );
  assert.ok(
    messages.some((m) =>
      m.startsWith(
        'HTTPRoute shop/wide-route: spec.hostnames[0]: "*.co.uk" is a wildcard over the public suffix co.uk',
      ),
    ),
    messages.join('\n'),
  );
  assert.deepEqual(
    out.routes.map((route) => String(route.from)),
    ['https://fine.example.com'],
  );
  const claimed = liveHostClaims(objects).map((claim) => claim.host);
  assert.ok(!claimed.includes('*.com') && !claimed.includes('*.co.uk'), claimed.join(','));
  assert.ok(claimed.includes('fine.example.com'), claimed.join(','));
});
