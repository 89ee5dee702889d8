// Recorded host owners (host-owners.ts, host-claims.ts) through the whole route source, as the
// watcher runs it: each pass decides the owners from the record in the Portcullis object's
// status.hostOwners and the live objects' claims, builds with them, and records them again. The
// security review's scenarios: an old object edited to add another namespace's host, a squatter
// waiting for the owner to re-create its object, a refused owner object, a shared infra Gateway,
// an exact host or a certificate under another namespace's wildcard.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { liveHostClaims, nextHostOwners } from '../../../src/kubernetes/host-claims.js';
import {
  coveringWildcards,
  decideHostOwners,
  hostOwnersRecord,
  recordedHostOwners,
} from '../../../src/kubernetes/host-owners.js';
import {
  acceptedObjects,
  liveInputs,
  substituteProblemObjects,
} from '../../../src/kubernetes/last-accepted.js';
import {
  kubernetesRoutes,
  type RouteSourceInput,
  type RouteSourceOutput,
} from '../../../src/kubernetes/route-source.js';
import type { HTTPRoute, Ingress } from '../../../src/kubernetes/objects.js';
import { sameStatus, settingsStatus } from '../../../src/kubernetes/settings-status.js';
import { settingsCrd } from '../../../src/kubernetes/crd-schema.js';
import { gateway, httpRoute, ingress, input, path, service, slice, tlsSecret } from './fixtures.js';

const SHARE = 'portcullis.dev/allowed_namespaces';
const TENANTS = ['team-a', 'team-b', 'team-c'];

function inNamespace<T extends { metadata: { namespace?: string } }>(object: T, namespace: string): T {
  return { ...object, metadata: { ...object.metadata, namespace } };
}

function tenantIngress(
  namespace: string,
  name: string,
  host: string,
  prefix: string,
  created: string,
  extra: { annotations?: Record<string, string>; tls?: { secretName: string }[] } = {},
): Ingress {
  return inNamespace(ingress(name, [path(prefix, 'Prefix')], { host, created, ...extra }), namespace);
}

/** An HTTPRoute of `namespace` on Gateway infra/edge for `host`. */
function infraRoute(namespace: string, prefix: string, created: string, host = 'app.example.com'): HTTPRoute {
  const route = httpRoute('r', {
    parentRefs: [{ name: 'edge', namespace: 'infra' }],
    hostnames: [host],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: prefix } }],
        backendRefs: [{ name: 'web', port: 80 }],
      },
    ],
  });
  return { ...route, metadata: { ...route.metadata, namespace, creationTimestamp: created } };
}

const INFRA_GATEWAY = inNamespace(
  gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]),
  'infra',
);

function cluster(
  extra: Partial<RouteSourceInput>,
  secrets: Parameters<typeof input>[1] = [],
): RouteSourceInput {
  return input(
    {
      services: TENANTS.map((namespace) => inNamespace(service('web'), namespace)),
      endpointSlices: TENANTS.map((namespace) => inNamespace(slice('web', [['10.1.0.5', true]]), namespace)),
      ...extra,
    },
    secrets,
  );
}

/** One watcher pass: owners from `status` and the live objects, the build, and the status it records. */
function pass(
  live: RouteSourceInput,
  status: unknown,
): { readonly out: RouteSourceOutput; readonly status: { hostOwners: Record<string, string> } } {
  const hostOwners = nextHostOwners(status, live);
  return {
    out: kubernetesRoutes({ ...live, hostOwners }),
    status: { hostOwners: hostOwnersRecord(hostOwners) },
  };
}

/** `host path <- namespace/name` of each route. */
function served(out: RouteSourceOutput): string[] {
  return out.routes.map((route, index) => {
    const origin = out.routeOrigins[index]?.object;
    return `${String(route.from)} ${String(route.prefix ?? route.path)} <- ${origin?.namespace}/${origin?.name}`;
  });
}

const A_WEB = tenantIngress('team-a', 'web', 'app.example.com', '/', '2026-01-01T00:00:00Z');

test("a recorded owner keeps its host when another namespace's OLDER object is edited to claim it (review own1)", () => {
  const legacy = tenantIngress('team-b', 'legacy', 'other.example.com', '/login', '2025-01-01T00:00:00Z');
  const first = pass(cluster({ ingresses: [A_WEB, legacy] }), undefined);
  assert.deepEqual(first.status.hostOwners, { 'app.example.com': 'team-a', 'other.example.com': 'team-b' });
  // team-b edits its 2025 Ingress to add team-a's host: the record decides, not the object's age.
  const edited = tenantIngress('team-b', 'legacy', 'app.example.com', '/login', '2025-01-01T00:00:00Z');
  const second = pass(cluster({ ingresses: [A_WEB, edited] }), first.status);
  assert.deepEqual(served(second.out), ['https://app.example.com / <- team-a/web']);
  assert.match(
    second.out.skipped[0]?.message ?? '',
    /^host app\.example\.com belongs to namespace team-a \(Ingress team-a\/web claims it/,
  );
  assert.deepEqual(second.status.hostOwners, { 'app.example.com': 'team-a' });
  // Without a record (a new cluster) the oldest object decides: the weakness the docs name.
  assert.match(
    pass(cluster({ ingresses: [A_WEB, edited] }), undefined).out.skipped[0]?.message ?? '',
    /team-b/,
  );
});

test("the owner deleting and re-creating its object keeps the host from a squatter's older claim", () => {
  const squat = tenantIngress('team-b', 'squat', 'app.example.com', '/login', '2025-06-01T00:00:00Z');
  const status = { hostOwners: { 'app.example.com': 'team-a' } };
  // Deleted (a Helm reinstall in progress): the squatter's claim gets nothing; the record stays.
  const gone = pass(cluster({ ingresses: [squat] }), status);
  assert.deepEqual(gone.out.routes, []);
  assert.match(
    gone.out.skipped[0]?.message ?? '',
    /belongs to namespace team-a \(recorded in the Portcullis object's status\.hostOwners/,
  );
  assert.deepEqual(gone.status, status);
  // Re-created, newer than the squatter's object: still team-a's.
  const again = tenantIngress('team-a', 'web', 'app.example.com', '/', '2026-07-01T00:00:00Z');
  const back = pass(cluster({ ingresses: [again, squat] }), gone.status);
  assert.deepEqual(served(back.out), ['https://app.example.com / <- team-a/web']);
  assert.deepEqual(back.status, status);
  // Once no object claims the host, the record drops it; the next claim decides anew.
  assert.deepEqual(pass(cluster({ ingresses: [] }), status).status.hostOwners, {});
});

test("a refused owner object keeps its host: the squatter does not serve /login while team-a's Service is missing (review own2)", () => {
  const A = { ...A_WEB, metadata: { ...A_WEB.metadata, uid: 'ua' } };
  const squat = tenantIngress('team-b', 'squat', 'app.example.com', '/login', '2026-02-01T00:00:00Z');
  const B = { ...squat, metadata: { ...squat.metadata, uid: 'ub' } };
  const healthy = cluster({ ingresses: [A, B] });
  const first = pass(healthy, undefined);
  const accepted = acceptedObjects(healthy, new Map());
  // team-a's Service is gone: its Ingress has a problem, and its last accepted version too.
  const broken = cluster({
    ingresses: [A, B],
    services: [inNamespace(service('web'), 'team-b')],
    endpointSlices: [inNamespace(slice('web', [['10.1.0.5', true]]), 'team-b')],
  });
  const hostOwners = nextHostOwners(first.status, broken);
  let inputs = liveInputs({ ...broken, hostOwners }, new Map());
  let out = kubernetesRoutes({ ...broken, ...inputs.routes });
  for (let round = 0; round < 4 && out.problems.length > 0; round++) {
    const next = substituteProblemObjects(
      inputs,
      out.problems.map((problem) => problem.object),
      accepted,
    );
    if (next === undefined) break;
    inputs = next;
    out = kubernetesRoutes({ ...broken, ...inputs.routes });
  }
  assert.equal(inputs.fates.size, 1, 'team-a/web is left out');
  assert.deepEqual(served(out), [], "team-b's /login does not serve on team-a's host");
  assert.match(out.skipped[0]?.message ?? '', /belongs to namespace team-a/);
  assert.deepEqual(hostOwnersRecord(hostOwners), { 'app.example.com': 'team-a' });
});

test('an HTTPRoute on a shared infra Gateway counts for its own namespace; sharing is not transitive (review own3, own5)', () => {
  const mine = infraRoute('team-a', '/', '2025-01-01T00:00:00Z');
  const theirs = infraRoute('team-b', '/login', '2026-05-01T00:00:00Z');
  const out = pass(cluster({ gateways: [INFRA_GATEWAY], httpRoutes: [mine, theirs] }), undefined);
  assert.deepEqual(served(out.out), ['https://app.example.com / <- team-a/r']);
  assert.match(
    out.out.skipped[0]?.message ?? '',
    /^host app\.example\.com belongs to namespace team-a \(HTTPRoute team-a\/r/,
  );
  assert.deepEqual(out.status.hostOwners, { 'app.example.com': 'team-a' });
  // team-c shares pay.example.com with team-a; team-b's route through team-a's Gateway gets nothing.
  const pay = tenantIngress('team-c', 'web', 'pay.example.com', '/', '2025-01-01T00:00:00Z', {
    annotations: { [SHARE]: 'team-a' },
  });
  const gatewayA = inNamespace(
    gateway([{ name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } }]),
    'team-a',
  );
  const evil = httpRoute('evil', {
    parentRefs: [{ name: 'edge', namespace: 'team-a' }],
    hostnames: ['pay.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/login' } }],
        backendRefs: [{ name: 'web', port: 80 }],
      },
    ],
  });
  const evilB = {
    ...evil,
    metadata: { ...evil.metadata, namespace: 'team-b', creationTimestamp: '2026-05-01T00:00:00Z' },
  };
  const transitive = pass(
    cluster({ ingresses: [pay], gateways: [gatewayA], httpRoutes: [evilB] }),
    undefined,
  );
  assert.deepEqual(served(transitive.out), ['https://pay.example.com / <- team-c/web']);
  assert.match(
    transitive.out.skipped[0]?.message ?? '',
    /belongs to namespace team-c.*allowed_namespaces: "team-b"/,
  );
});

test("an exact host under another namespace's owned wildcard is the wildcard owner's (review own1, second part)", () => {
  const wildcard = tenantIngress('team-a', 'web', '*.example.com', '/', '2025-01-01T00:00:00Z');
  const exact = tenantIngress('team-b', 'x', 'app.example.com', '/', '2026-06-01T00:00:00Z');
  const out = pass(cluster({ ingresses: [wildcard, exact] }), undefined);
  assert.deepEqual(served(out.out), ['https://*.example.com / <- team-a/web']);
  assert.match(out.out.skipped[0]?.message ?? '', /claims \*\.example\.com, which covers it/);
  // Only hosts their owner holds itself are recorded.
  assert.deepEqual(out.status.hostOwners, { '*.example.com': 'team-a' });
  // Recorded wildcard, then an OLDER object of team-b edited to add the exact host: still team-a's.
  const older = tenantIngress('team-b', 'x', 'app.example.com', '/', '2024-01-01T00:00:00Z');
  assert.equal(pass(cluster({ ingresses: [wildcard, older] }), out.status).out.skipped.length, 1);
  // An exact host recorded before the wildcard was claimed stays its owner's.
  const before = pass(cluster({ ingresses: [older] }), undefined);
  const later = tenantIngress('team-a', 'web', '*.example.com', '/', '2026-01-01T00:00:00Z');
  assert.deepEqual(pass(cluster({ ingresses: [older, later] }), before.status).out.skipped, []);
});

test("a certificate naming a host under another namespace's wildcard is kept after the owner's, with a warning, unless shared (review own4)", () => {
  const wildcard = tenantIngress('team-a', 'web', '*.example.com', '/', '2025-01-01T00:00:00Z', {
    tls: [{ secretName: 'wild' }],
  });
  const other = tenantIngress('team-b', 'b', 'b.other.com', '/', '2024-01-01T00:00:00Z', {
    tls: [{ secretName: 'sneaky' }],
  });
  const secrets = [
    inNamespace(tlsSecret('wild', '*.example.com'), 'team-a'),
    inNamespace(tlsSecret('sneaky', 'app.example.com'), 'team-b'),
  ];
  const order = (out: RouteSourceOutput): string[] =>
    out.certificateOrigins.map((origin) => `${origin.object.namespace}/${origin.object.name}`);
  const out = pass(cluster({ ingresses: [wildcard, other] }, secrets), undefined).out;
  // team-b's is older, yet it goes after team-a's: nothing is left out.
  assert.deepEqual(order(out), ['team-a/web', 'team-b/b']);
  assert.match(
    out.skipped[0]?.message ?? '',
    /^the certificate names host app\.example\.com belongs to namespace team-a \(Ingress team-a\/web claims \*\.example\.com, which covers it\); it is still served, after that namespace's certificates, .*claiming \*\.example\.com takes the annotation portcullis\.dev\/allowed_namespaces: "team-b"$/,
  );
  const sharing = { ...wildcard, metadata: { ...wildcard.metadata, annotations: { [SHARE]: 'team-b' } } };
  const shared = pass(cluster({ ingresses: [sharing, other] }, secrets), undefined).out;
  assert.deepEqual(order(shared), ['team-b/b', 'team-a/web']);
  assert.deepEqual(shared.skipped, []);
  // A wildcard certificate over another namespace's exact host is no warning (an exact one wins in Envoy).
  const wideSecrets = [inNamespace(tlsSecret('sneaky', '*.example.com'), 'team-b')];
  const exact = tenantIngress('team-a', 'web', 'app.example.com', '/', '2025-01-01T00:00:00Z');
  const wide = pass(cluster({ ingresses: [exact, other] }, wideSecrets), undefined).out;
  assert.deepEqual(order(wide), ['team-b/b']);
  assert.deepEqual(wide.skipped, []);
});

test("a recorded wildcard keeps covering its hosts while its owner's object is refused (review #8)", () => {
  const wildcard = tenantIngress('team-a', 'web', '*.example.com', '/', '2025-01-01T00:00:00Z');
  const A = { ...wildcard, metadata: { ...wildcard.metadata, uid: 'ua' } };
  const squat = tenantIngress('team-b', 'squat', 'app.example.com', '/login', '2026-02-01T00:00:00Z');
  const B = { ...squat, metadata: { ...squat.metadata, uid: 'ub' } };
  const healthy = cluster({ ingresses: [A, B] });
  const first = pass(healthy, undefined);
  assert.deepEqual(first.status.hostOwners, { '*.example.com': 'team-a' });
  // team-a's Service is gone and it has no accepted version: its Ingress is left out of the build.
  const broken = cluster({
    ingresses: [A, B],
    services: [inNamespace(service('web'), 'team-b')],
    endpointSlices: [inNamespace(slice('web', [['10.1.0.5', true]]), 'team-b')],
  });
  const hostOwners = nextHostOwners(first.status, broken);
  let inputs = liveInputs({ ...broken, hostOwners }, new Map());
  let out = kubernetesRoutes({ ...broken, ...inputs.routes });
  for (let round = 0; round < 4 && out.problems.length > 0; round++) {
    const next = substituteProblemObjects(
      inputs,
      out.problems.map((problem) => problem.object),
      new Map(),
    );
    if (next === undefined) break;
    inputs = next;
    out = kubernetesRoutes({ ...broken, ...inputs.routes });
  }
  assert.equal(inputs.fates.size, 1, 'team-a/web is left out');
  assert.deepEqual(served(out), [], "team-b's /login does not serve under team-a's wildcard");
  assert.match(
    out.skipped[0]?.message ?? '',
    /belongs to namespace team-a .*claims \*\.example\.com, which covers it/,
  );
});

test('the rule itself: recorded first, then by oldest claim; wildcards cover one or more labels, * none', () => {
  assert.deepEqual(coveringWildcards('a.b.example.com'), ['*.b.example.com', '*.example.com', '*.com']);
  assert.deepEqual(coveringWildcards('*.b.example.com'), ['*.example.com', '*.com']);
  assert.deepEqual(coveringWildcards('*'), []);
  const claim = (host: string, namespace: string, created: string, sharesWith: string[] = []) => ({
    host,
    namespace,
    object: { kind: 'Ingress', namespace, name: 'x' },
    rank: [created, `${namespace}/x`] as const,
    sharesWith,
  });
  const owners = decideHostOwners(new Map([['a.example.com', { namespace: 'team-b' }]]), [
    claim('a.example.com', 'team-a', '2020'),
    claim('*.example.com', 'team-c', '2021', ['team-a']),
    claim('b.example.com', 'team-a', '2022'),
    claim('c.example.com', 'team-b', '2019'),
    claim('*', 'team-a', '2018'),
  ]);
  assert.deepEqual(
    Object.fromEntries(
      [...owners].map(([host, owner]) => [
        host,
        `${owner.namespace}${owner.coveredBy === undefined ? '' : ` via ${owner.coveredBy}`}`,
      ]),
    ),
    {
      'a.example.com': 'team-b',
      '*': 'team-a',
      'c.example.com': 'team-b',
      '*.example.com': 'team-c',
      'b.example.com': 'team-a',
    },
    'c.example.com was claimed before the wildcard; b.example.com is shared with team-a',
  );
  // What the status holds back: only namespace names count.
  assert.deepEqual(
    [...recordedHostOwners({ hostOwners: { 'A.example.com': 'team-a', 'b.example.com': 'Team B', c: 3 } })],
    [['a.example.com', { namespace: 'team-a' }]],
  );
  assert.deepEqual([...recordedHostOwners(undefined)], []);
});

test('claims come from the live objects: an Ingress without a host or with a default backend claims *', () => {
  const noHost = inNamespace(
    {
      ...ingress('all', [path('/', 'Prefix')]),
      spec: {
        ingressClassName: 'portcullis',
        defaultBackend: { service: { name: 'web', port: { number: 80 } } },
      },
    } as Ingress,
    'team-a',
  );
  const other = inNamespace(
    {
      ...ingress('other', [path('/', 'Prefix')]),
      spec: { ingressClassName: 'nginx', rules: [{ host: 'x.example.com' }] },
    } as Ingress,
    'team-b',
  );
  const claims = liveHostClaims(
    cluster({
      ingresses: [noHost, other],
      gateways: [INFRA_GATEWAY],
      httpRoutes: [infraRoute('team-b', '/', '2026-01-01T00:00:00Z')],
    }),
  );
  assert.deepEqual(
    claims.map((claim) => `${claim.host} ${claim.namespace} ${claim.object.kind}`),
    ['* team-a Ingress', 'app.example.com team-b HTTPRoute'],
  );
});

test('the status records the owners (none: no field), and an unchanged record is not a change', () => {
  const verdict = { generation: 1, problems: [], serving: true };
  const now = new Date('2026-11-29T10:00:00Z');
  const recorded = settingsStatus(
    { ...verdict, hostOwners: { 'app.example.com': 'team-a' } },
    undefined,
    now,
  );
  assert.deepEqual(recorded.hostOwners, { 'app.example.com': 'team-a' });
  assert.equal(
    sameStatus(
      settingsStatus({ ...verdict, hostOwners: { 'app.example.com': 'team-a' } }, recorded, now),
      recorded,
    ),
    true,
  );
  assert.equal(
    sameStatus(
      settingsStatus({ ...verdict, hostOwners: { 'app.example.com': 'team-b' } }, recorded, now),
      recorded,
    ),
    false,
  );
  assert.equal('hostOwners' in settingsStatus({ ...verdict, hostOwners: {} }, undefined, now), false);
  // The CRD's status schema has the field, so the API server keeps it.
  const status = (
    settingsCrd().spec as {
      versions: {
        schema: { openAPIV3Schema: { properties: { status: { properties: Record<string, unknown> } } } };
      }[];
    }
  ).versions[0]!.schema.openAPIV3Schema.properties.status;
  assert.deepEqual(status.properties.hostOwners, {
    type: 'object',
    description: (status.properties.hostOwners as { description: string }).description,
    additionalProperties: { type: 'string' },
  });
});
