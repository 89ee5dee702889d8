// Host ownership through the whole route source: a namespace's paths on a host another namespace
// owns (the namespace of the oldest Ingress or HTTPRoute claiming it) are left out with a message
// naming the owner and how to share, unless the owner shares with portcullis.dev/allowed_namespaces;
// a certificate naming another namespace's host is kept, after the owner's own, with a warning.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { kubernetesRoutes, type RouteSourceOutput } from '../../../src/kubernetes/route-source.js';
import { CONTROLLER_ANNOTATIONS, readAnnotations } from '../../../src/kubernetes/annotations.js';
import type { Gateway, HTTPRoute, Ingress, Secret } from '../../../src/kubernetes/objects.js';
import { generateTestCertificate } from '../../support/test-certs.js';
import {
  gateway,
  httpRoute,
  httpsListener,
  ingress,
  input,
  path,
  service,
  slice,
  tlsSecret,
} from './fixtures.js';

const SHARE = 'portcullis.dev/allowed_namespaces';

/** `object` moved to `namespace`. */
function inNamespace<T extends { metadata: { namespace?: string } }>(object: T, namespace: string): T {
  return { ...object, metadata: { ...object.metadata, namespace } };
}

/** An Ingress `namespace/name` created at `created` with Prefix `paths` on `host`. */
function tenantIngress(
  namespace: string,
  name: string,
  host: string,
  paths: readonly string[],
  created: string,
  annotations?: Record<string, string>,
  tls?: readonly { secretName: string }[],
): Ingress {
  return inNamespace(
    ingress(
      name,
      paths.map((value) => path(value, 'Prefix')),
      {
        host,
        created,
        ...(annotations === undefined ? {} : { annotations }),
        ...(tls === undefined ? {} : { tls }),
      },
    ),
    namespace,
  );
}

/** Service `web` with ready endpoints in each namespace. */
function servicesIn(
  namespaces: readonly string[],
): Pick<Parameters<typeof input>[0] & object, 'services' | 'endpointSlices'> {
  return {
    services: namespaces.map((namespace) => inNamespace(service('web'), namespace)),
    endpointSlices: namespaces.map((namespace) => inNamespace(slice('web', [['10.1.0.5', true]]), namespace)),
  };
}

const TENANTS = ['team-a', 'team-b', 'team-c'];

function routesOf(ingresses: readonly Ingress[], extra: Parameters<typeof input>[0] = {}): RouteSourceOutput {
  return kubernetesRoutes(input({ ingresses, ...servicesIn(TENANTS), ...extra }));
}

/** `host path` of each route, and which object serves it. */
function served(out: RouteSourceOutput): string[] {
  return out.routes.map((route, index) => {
    const matcher = route.path ?? route.prefix ?? route.regex;
    const origin = out.routeOrigins[index]?.object;
    return `${String(route.from)} ${String(matcher)} <- ${origin?.namespace}/${origin?.name}`;
  });
}

const A_WEB = tenantIngress('team-a', 'web', 'app.example.com', ['/'], '2026-01-01T00:00:00Z');
const B_ADMIN = tenantIngress('team-b', 'admin', 'app.example.com', ['/admin'], '2026-01-02T00:00:00Z');

test("another namespace's path on an owned host is left out, with a message naming the owner and how to share", () => {
  const out = routesOf([B_ADMIN, A_WEB]);
  assert.deepEqual(out.problems, []);
  assert.deepEqual(served(out), ['https://app.example.com / <- team-a/web']);
  assert.equal(out.skipped.length, 1);
  assert.deepEqual(out.skipped[0]?.object, { kind: 'Ingress', namespace: 'team-b', name: 'admin' });
  assert.equal(
    formatObjectProblem(out.skipped[0]!),
    'Ingress team-b/admin: spec.rules[0].host: host app.example.com belongs to namespace team-a (Ingress team-a/web claims it; the first namespace to claim a host keeps it); ' +
      'this object\'s paths on it are left out. To share it, an Ingress or HTTPRoute in team-a claiming app.example.com takes the annotation portcullis.dev/allowed_namespaces: "team-b"',
  );
});

test('the same namespace adds paths on its host from another Ingress', () => {
  const second = tenantIngress('team-a', 'admin', 'app.example.com', ['/admin'], '2026-01-02T00:00:00Z');
  const out = routesOf([second, A_WEB]);
  assert.deepEqual(out.skipped, []);
  assert.deepEqual(served(out), [
    'https://app.example.com /admin <- team-a/admin',
    'https://app.example.com /admin/ <- team-a/admin',
    'https://app.example.com / <- team-a/web',
  ]);
});

test('allowed_namespaces on an owner Ingress shares its hosts: a list, or *', () => {
  for (const value of ['team-b', 'team-c, team-b', '*']) {
    const shared = { ...A_WEB, metadata: { ...A_WEB.metadata, annotations: { [SHARE]: value } } };
    const out = routesOf([B_ADMIN, shared]);
    assert.deepEqual(out.problems, [], value);
    assert.deepEqual(out.skipped, [], value);
    assert.ok(served(out).includes('https://app.example.com /admin/ <- team-b/admin'), value);
  }
  const others = { ...A_WEB, metadata: { ...A_WEB.metadata, annotations: { [SHARE]: 'team-c' } } };
  assert.equal(routesOf([B_ADMIN, others]).skipped.length, 1, 'shared with team-c only: team-b stays out');
});

test('allowed_namespaces counts only from the owner namespace; a bad value is a problem naming it', () => {
  // team-b naming itself shares nothing: it does not own the host.
  const selfShared = { ...B_ADMIN, metadata: { ...B_ADMIN.metadata, annotations: { [SHARE]: 'team-b' } } };
  assert.equal(routesOf([selfShared, A_WEB]).skipped.length, 1);
  const bad = { ...A_WEB, metadata: { ...A_WEB.metadata, annotations: { [SHARE]: '[team-b], Team_C' } } };
  const out = routesOf([bad]);
  assert.deepEqual(
    out.problems.map((problem) => formatObjectProblem(problem)),
    [
      'Ingress team-a/web: annotation portcullis.dev/allowed_namespaces: expected namespace names separated by commas, or "*"; "[team-b]", "Team_C" are not',
    ],
  );
});

test('the owner is the oldest object, whatever the list order; deleting it hands the host to the next oldest', () => {
  const older = tenantIngress('team-b', 'admin', 'app.example.com', ['/admin'], '2025-12-31T00:00:00Z');
  for (const order of [
    [older, A_WEB],
    [A_WEB, older],
  ]) {
    const out = routesOf(order);
    assert.deepEqual(served(out), [
      'https://app.example.com /admin <- team-b/admin',
      'https://app.example.com /admin/ <- team-b/admin',
    ]);
    assert.match(out.skipped[0]?.message ?? '', /belongs to namespace team-b \(Ingress team-b\/admin/);
  }
  // Same time: namespace/name decides.
  const sameTime = tenantIngress('team-b', 'admin', 'app.example.com', ['/admin'], '2026-01-01T00:00:00Z');
  assert.match(routesOf([sameTime, A_WEB]).skipped[0]?.message ?? '', /belongs to namespace team-a/);
  // team-a's Ingress deleted: team-b's is now the oldest claiming the host.
  const after = routesOf([B_ADMIN]);
  assert.deepEqual(after.skipped, []);
  assert.equal(after.routes.length, 2);
  // And a third namespace's newer claim is refused naming team-b.
  const c = tenantIngress('team-c', 'c', 'app.example.com', ['/c'], '2026-01-03T00:00:00Z');
  assert.match(routesOf([B_ADMIN, c]).skipped[0]?.message ?? '', /belongs to namespace team-b/);
});

test("a host under another namespace's wildcard belongs to the wildcard's owner unless it shares the wildcard", () => {
  const wildcard = tenantIngress('team-b', 'any', '*.example.com', ['/'], '2025-12-01T00:00:00Z');
  const out = routesOf([wildcard, A_WEB]);
  assert.deepEqual(served(out), ['https://*.example.com / <- team-b/any']);
  assert.equal(
    out.skipped[0]?.message,
    'host app.example.com belongs to namespace team-b (Ingress team-b/any claims *.example.com, which covers it); ' +
      'this object\'s paths on it are left out. To share it, an Ingress or HTTPRoute in team-b claiming *.example.com takes the annotation portcullis.dev/allowed_namespaces: "team-a"',
  );
  // Deeper names and longer wildcards are covered too; `*` covers nothing.
  const deep = tenantIngress('team-a', 'deep', 'a.b.example.com', ['/'], '2026-01-01T00:00:00Z');
  const longer = tenantIngress('team-a', 'longer', '*.b.example.com', ['/'], '2026-01-01T00:00:00Z');
  assert.equal(routesOf([wildcard, deep, longer]).skipped.length, 2);
  const secondWildcard = tenantIngress('team-a', 'any', '*.example.com', ['/x'], '2026-01-01T00:00:00Z');
  assert.match(
    routesOf([wildcard, secondWildcard]).skipped[0]?.message ?? '',
    /host \*\.example\.com belongs to namespace team-b/,
  );
  // Shared: team-a owns its exact host under team-b's wildcard.
  const sharing = { ...wildcard, metadata: { ...wildcard.metadata, annotations: { [SHARE]: 'team-a' } } };
  const shared = routesOf([sharing, A_WEB]);
  assert.deepEqual(shared.skipped, []);
  assert.deepEqual(served(shared), [
    'https://*.example.com / <- team-b/any',
    'https://app.example.com / <- team-a/web',
  ]);
  // The exact host claimed first (older) stays its owner's: a later wildcard does not take it.
  const laterWildcard = tenantIngress('team-b', 'any', '*.example.com', ['/'], '2026-02-01T00:00:00Z');
  assert.deepEqual(routesOf([laterWildcard, A_WEB]).skipped, []);
});

test('a host without a name (every host, *) has an owner too; other hosts are not affected', () => {
  const catchAll = inNamespace(
    {
      ...ingress('all', [path('/', 'Prefix')], { created: '2026-01-01T00:00:00Z' }),
      spec: {
        ingressClassName: 'portcullis',
        rules: [{ http: { paths: [path('/', 'Prefix')] } }],
      },
    } as Ingress,
    'team-a',
  );
  const intruder = inNamespace(
    {
      ...catchAll,
      metadata: { ...catchAll.metadata, name: 'intruder', creationTimestamp: '2026-01-02T00:00:00Z' },
      spec: {
        ingressClassName: 'portcullis',
        rules: [{ http: { paths: [path('/login', 'Exact')] } }],
      },
    } as Ingress,
    'team-b',
  );
  const own = tenantIngress('team-b', 'own', 'b.example.com', ['/'], '2026-01-02T00:00:00Z');
  const out = routesOf([catchAll, intruder, own]);
  assert.deepEqual(served(out), ['https://b.example.com / <- team-b/own', 'https://* / <- team-a/all']);
  assert.match(out.skipped[0]?.message ?? '', /host \* belongs to namespace team-a/);
});

/** Gateway `edge` in `namespace` with an HTTP listener for `hostname`, routes from `from`. */
function edge(namespace: string, hostname: string, from: 'Same' | 'All'): Gateway {
  return inNamespace(
    gateway([
      { name: 'http', port: 80, protocol: 'HTTP', hostname, allowedRoutes: { namespaces: { from } } },
    ]),
    namespace,
  );
}

/** HTTPRoute `namespace/name` created at `created`: `/prefix` to Service web, on Gateway `gatewayNamespace/edge`. */
function tenantRoute(
  namespace: string,
  name: string,
  prefix: string,
  created: string,
  gatewayNamespace = namespace,
  annotations?: Record<string, string>,
): HTTPRoute {
  const route = httpRoute(
    name,
    {
      parentRefs: [{ name: 'edge', namespace: gatewayNamespace }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: prefix } }],
          backendRefs: [{ name: 'web', port: 80 }],
        },
      ],
    },
    annotations,
  );
  return { ...route, metadata: { ...route.metadata, namespace, creationTimestamp: created } };
}

test('an HTTPRoute and an Ingress of different namespaces on one host: the oldest object owns it', () => {
  const gateways = [edge('team-b', 'app.example.com', 'Same')];
  const route = tenantRoute('team-b', 'r', '/admin', '2026-01-02T00:00:00Z');
  const out = routesOf([A_WEB], { gateways, httpRoutes: [route] });
  assert.deepEqual(out.problems, []);
  assert.deepEqual(served(out), ['https://app.example.com / <- team-a/web']);
  assert.match(
    formatObjectProblem(out.skipped[0]!),
    /^HTTPRoute team-b\/r: spec\.hostnames: host app\.example\.com belongs to namespace team-a/,
  );
  // The HTTPRoute older: it owns the host, and team-a's Ingress is the one left out.
  const older = tenantRoute('team-b', 'r', '/admin', '2025-01-01T00:00:00Z');
  const reversed = routesOf([A_WEB], { gateways, httpRoutes: [older] });
  assert.match(
    formatObjectProblem(reversed.skipped[0]!),
    /^Ingress team-a\/web: .*belongs to namespace team-b \(HTTPRoute team-b\/r/,
  );
  // The owner shares with team-b by annotation on its Ingress.
  const shared = { ...A_WEB, metadata: { ...A_WEB.metadata, annotations: { [SHARE]: 'team-b' } } };
  assert.deepEqual(routesOf([shared], { gateways, httpRoutes: [route] }).skipped, []);
  // ... or on an HTTPRoute of its own.
  const sharing = tenantRoute('team-b', 'r', '/admin', '2025-01-01T00:00:00Z', 'team-b', {
    [SHARE]: 'team-a',
  });
  assert.deepEqual(routesOf([A_WEB], { gateways, httpRoutes: [sharing] }).skipped, []);
});

test('an HTTPRoute counts for its own namespace, whatever Gateway it attaches through', () => {
  // Through team-a's own Gateway with from: All, team-b's route is still team-b's: left out.
  const gateways = [edge('team-a', 'app.example.com', 'All')];
  const route = tenantRoute('team-b', 'r', '/admin', '2026-01-02T00:00:00Z', 'team-a');
  const out = routesOf([A_WEB], { gateways, httpRoutes: [route] });
  assert.deepEqual(served(out), ['https://app.example.com / <- team-a/web']);
  assert.match(out.skipped[0]?.message ?? '', /belongs to namespace team-a/);
  // Shared by the owner, it serves.
  const shared = { ...A_WEB, metadata: { ...A_WEB.metadata, annotations: { [SHARE]: 'team-b' } } };
  assert.ok(
    served(routesOf([shared], { gateways, httpRoutes: [route] })).includes(
      'https://app.example.com /admin/ <- team-b/r',
    ),
  );
});

/** A `kubernetes.io/tls` Secret `namespace/name` whose certificate names `names`. */
function namesSecret(namespace: string, name: string, names: readonly string[]): Secret {
  const made = generateTestCertificate(names[0], names);
  return {
    metadata: { name, namespace },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(made.certPem).toString('base64'),
      'tls.key': Buffer.from(made.keyPem).toString('base64'),
    },
  };
}

/** `namespace/name (Secret id)` of each served certificate, in the order Envoy gets them. */
function certificateOrder(out: RouteSourceOutput): string[] {
  return out.certificateOrigins.map(
    (origin) =>
      `${origin.object.namespace}/${origin.object.name} ${/\(Secret (.*)\)/.exec(origin.where)?.[1]}`,
  );
}

test("a certificate naming another namespace's host is kept after the owner's, with a warning naming the owner", () => {
  const aTls = inNamespace(tlsSecret('a-tls', 'app.example.com'), 'team-a');
  const bTls = inNamespace(tlsSecret('b-tls', 'app.example.com'), 'team-b');
  const bOwn = tenantIngress('team-b', 'own', 'b.example.com', ['/'], '2025-01-01T00:00:00Z', undefined, [
    { secretName: 'b-tls' },
  ]);
  const aWeb = tenantIngress('team-a', 'web', 'app.example.com', ['/'], '2026-01-01T00:00:00Z', undefined, [
    { secretName: 'a-tls' },
  ]);
  const build = (ingresses: readonly Ingress[]): RouteSourceOutput =>
    kubernetesRoutes(input({ ingresses, ...servicesIn(TENANTS) }, [aTls, bTls]));
  const out = build([bOwn, aWeb]);
  assert.deepEqual(out.problems, []);
  // team-b's (older) certificate is not left out; team-a's own goes first, so it wins by SNI.
  assert.deepEqual(certificateOrder(out), ['team-a/web team-a/a-tls', 'team-b/own team-b/b-tls']);
  assert.equal(out.certificates.length, 2);
  assert.equal(out.skipped.length, 1);
  assert.match(
    formatObjectProblem(out.skipped[0]!),
    /^Ingress team-b\/own: spec\.tls\[0\]\.secretName \(Secret team-b\/b-tls\): the certificate names host app\.example\.com belongs to namespace team-a .*; it is still served, after that namespace's certificates, so for app\.example\.com it answers only while namespace team-a has no certificate of its own with that very name\. To share it/,
  );
  // Shared: no warning, the order given (oldest object first).
  const shared = { ...aWeb, metadata: { ...aWeb.metadata, annotations: { [SHARE]: 'team-b' } } };
  const sharedOut = build([bOwn, shared]);
  assert.deepEqual(certificateOrder(sharedOut), ['team-b/own team-b/b-tls', 'team-a/web team-a/a-tls']);
  assert.deepEqual(sharedOut.skipped, []);
  // No one claims app.example.com: team-b's certificate serves, no warning.
  assert.deepEqual(certificateOrder(build([bOwn])), ['team-b/own team-b/b-tls']);
  assert.deepEqual(build([bOwn]).skipped, []);
});

test("a tenant claiming one name of another namespace's certificate does not take the certificate away (review: certs)", () => {
  const aTls = namesSecret('team-a', 'a-tls', ['a.example.com', 'b.example.com']);
  const aWeb = tenantIngress('team-a', 'web', 'a.example.com', ['/'], '2026-01-01T00:00:00Z', undefined, [
    { secretName: 'a-tls' },
  ]);
  const bClaim = tenantIngress('team-b', 'grab', 'b.example.com', ['/'], '2026-11-29T00:00:00Z');
  const out = kubernetesRoutes(input({ ingresses: [aWeb, bClaim], ...servicesIn(TENANTS) }, [aTls]));
  assert.deepEqual(out.problems, []);
  assert.deepEqual(certificateOrder(out), ['team-a/web team-a/a-tls']);
  assert.match(out.skipped[0]?.message ?? '', /names host b\.example\.com belongs to namespace team-b/);
  assert.deepEqual(served(out), [
    'https://a.example.com / <- team-a/web',
    'https://b.example.com / <- team-b/grab',
  ]);
});

test("a shared Gateway's certificate is kept when a tenant claims one of its names, and orders after the tenant's own", () => {
  const infraTls = namesSecret('infra', 'edge-tls', ['example.com', '*.example.com']);
  const edge = inNamespace(
    gateway([
      {
        ...httpsListener('*.example.com'),
        allowedRoutes: { namespaces: { from: 'All' } },
      },
      { ...httpsListener('example.com'), name: 'apex', allowedRoutes: { namespaces: { from: 'All' } } },
    ]),
    'infra',
  );
  // team-b is first to claim example.com, with no certificate of its own.
  const apex = tenantIngress('team-b', 'apex', 'example.com', ['/'], '2026-11-29T00:00:00Z');
  const build = (ingresses: readonly Ingress[], secrets: readonly Secret[] = []): RouteSourceOutput =>
    kubernetesRoutes(
      input({ ingresses, gateways: [edge], ...servicesIn([...TENANTS, 'infra']) }, [infraTls, ...secrets]),
    );
  const out = build([apex]);
  assert.deepEqual(out.problems, []);
  assert.deepEqual(certificateOrder(out), ['infra/edge infra/edge-tls']);
  assert.match(
    formatObjectProblem(out.skipped[0]!),
    /^Gateway infra\/edge: spec\.listeners\[0\]\.tls\.certificateRefs\[0\] \(Secret infra\/edge-tls\): the certificate names host example\.com belongs to namespace team-b \(Ingress team-b\/apex/,
  );
  // Once team-b brings its own certificate for example.com, it goes first and wins by SNI.
  const withOwn = { ...apex, spec: { ...apex.spec, tls: [{ secretName: 'b-tls' }] } };
  const bTls = inNamespace(tlsSecret('b-tls', 'example.com'), 'team-b');
  assert.deepEqual(certificateOrder(build([withOwn], [bTls])), [
    'team-b/apex team-b/b-tls',
    'infra/edge infra/edge-tls',
  ]);
});

test("an exact certificate on an infra Gateway listener serves a tenant HTTPRoute's host (reported, not left out)", () => {
  const infraTls = inNamespace(tlsSecret('edge-tls', 'app.example.com'), 'infra');
  const edge = inNamespace(
    gateway([{ ...httpsListener('app.example.com'), allowedRoutes: { namespaces: { from: 'All' } } }]),
    'infra',
  );
  const route = httpRoute('r', {
    parentRefs: [{ name: 'edge', namespace: 'infra' }],
    hostnames: ['app.example.com'],
    rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
  });
  const teamRoute: HTTPRoute = {
    ...route,
    metadata: { ...route.metadata, namespace: 'team-a', creationTimestamp: '2026-01-01T00:00:00Z' },
  };
  const out = kubernetesRoutes(
    input({ gateways: [edge], httpRoutes: [teamRoute], ...servicesIn(TENANTS) }, [infraTls]),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(served(out), ['https://app.example.com / <- team-a/r']);
  assert.deepEqual(certificateOrder(out), ['infra/edge infra/edge-tls']);
  assert.match(out.skipped[0]?.message ?? '', /belongs to namespace team-a \(HTTPRoute team-a\/r/);
});

test('the HTTPRoute fixtures of one namespace are unaffected (the Gateway shares its namespace)', () => {
  const out = kubernetesRoutes(
    input(
      {
        gateways: [gateway([httpsListener()])],
        httpRoutes: [
          httpRoute('r', {
            hostnames: ['shop.example.com'],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          }),
        ],
        ingresses: [ingress('shop', [path('/api', 'Prefix')])],
      },
      [inNamespace(tlsSecret('edge-tls', '*.example.com'), 'shop')],
    ),
  );
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.skipped, []);
  assert.equal(out.certificates.length, 1);
});

test('the controller annotations are documented and not refused as unknown route annotations', () => {
  const doc = readFileSync(new URL('../../../docs/kubernetes.md', import.meta.url), 'utf8');
  assert.deepEqual(Object.keys(CONTROLLER_ANNOTATIONS), [SHARE]);
  for (const name of Object.keys(CONTROLLER_ANNOTATIONS)) {
    assert.ok(doc.includes(`\`${name}\``), name);
    const read = readAnnotations({ kind: 'HTTPRoute', name: 'r' }, { [name]: 'team-b' });
    assert.deepEqual([read.problems, read.values], [[], {}]);
  }
  // A near miss gets the hint.
  const typo = readAnnotations({ kind: 'Ingress', name: 'x' }, { 'portcullis.dev/allowed_namespace': 'b' });
  assert.match(typo.problems[0]?.message ?? '', /did you mean portcullis\.dev\/allowed_namespaces\?/);
});
