// The Gateway API status Portcullis writes (pure): GatewayClass Accepted, Gateway Accepted /
// Programmed / addresses / listeners, HTTPRoute parents entries; problems from the route source
// itself mapped to the spec's reasons; unchanged status is not written again and keeps its times.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  gatewayAddresses,
  gatewayApiStatusWrites,
  type GatewayStatusInput,
  type StatusWrite,
} from '../../../src/kubernetes/gateway-status.js';
import { GATEWAY_CONTROLLER } from '../../../src/kubernetes/gateway-listeners.js';
import type { Gateway, HTTPRoute, ParentReference } from '../../../src/kubernetes/objects.js';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { kubernetesRoutes, type RouteSourceInput } from '../../../src/kubernetes/route-source.js';
import { gateway, httpRoute, httpsListener, input, OUR_GATEWAY_CLASS, tlsSecret } from './fixtures.js';

const NOW = new Date('2026-03-01T10:00:00.123Z');
const LATER = new Date('2026-03-01T11:00:00Z');
const BACKEND = { backendRefs: [{ name: 'web', port: 80 }] };
const SECRETS = [tlsSecret('edge-tls', '*.example.com')];

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}
interface ListenerStatus {
  name: string;
  supportedKinds: unknown[];
  attachedRoutes: number;
  conditions: Condition[];
}
interface ParentStatus {
  parentRef: Record<string, unknown>;
  controllerName: string;
  conditions: Condition[];
}

/** The route source's problems for `source`, and the status writes for that pass. */
function statusOf(
  source: Partial<RouteSourceInput>,
  extra: Partial<GatewayStatusInput> = {},
): { writes: StatusWrite[]; input: GatewayStatusInput } {
  const full = input(source, SECRETS);
  const routes = kubernetesRoutes(full);
  const statusInput: GatewayStatusInput = {
    gatewayClasses: full.gatewayClasses,
    gateways: full.gateways,
    httpRoutes: full.httpRoutes,
    problems: routes.problems,
    skipped: routes.skipped,
    serving: true,
    address: '203.0.113.7',
    now: NOW,
    ...extra,
  };
  return { writes: gatewayApiStatusWrites(statusInput), input: statusInput };
}

function find(writes: readonly StatusWrite[], kind: string, name: string): StatusWrite {
  const found = writes.find((write) => write.kind === kind && write.name === name);
  assert.ok(found, `a ${kind} ${name} write in ${JSON.stringify(writes.map((w) => `${w.kind} ${w.name}`))}`);
  return found;
}
const conditions = (write: StatusWrite): Condition[] => write.status['conditions'] as Condition[];
const condition = (list: readonly Condition[], type: string): Condition => {
  const found = list.find((c) => c.type === type);
  assert.ok(found, `condition ${type} in ${JSON.stringify(list)}`);
  return found;
};
const listenersOf = (write: StatusWrite): ListenerStatus[] => write.status['listeners'] as ListenerStatus[];
const parentsOf = (write: StatusWrite): ParentStatus[] => write.status['parents'] as ParentStatus[];
const brief = (c: Condition): string => `${c.type}=${c.status}/${c.reason}`;
const withGeneration = <T extends Gateway | HTTPRoute>(object: T, generation: number): T => ({
  ...object,
  metadata: { ...object.metadata, generation, uid: `uid-${object.metadata.name}`, resourceVersion: '7' },
});

test('a served Gateway and route: class Accepted, Gateway Accepted and Programmed with the address, the route Accepted', () => {
  const theirs: Gateway = {
    metadata: { name: 'theirs', namespace: 'shop' },
    spec: { gatewayClassName: 'istio', listeners: [httpsListener()] },
  };
  const { writes } = statusOf({
    gatewayClasses: [
      OUR_GATEWAY_CLASS,
      { metadata: { name: 'istio' }, spec: { controllerName: 'istio.io/x' } },
    ],
    gateways: [withGeneration(gateway(), 3), theirs],
    httpRoutes: [
      withGeneration(httpRoute('store', { hostnames: ['store.example.com'], rules: [BACKEND] }), 5),
    ],
  });
  assert.deepEqual(
    writes.map((w) => `${w.kind} ${w.namespace ?? ''}/${w.name}`),
    ['GatewayClass /portcullis', 'Gateway shop/edge', 'HTTPRoute shop/store'],
    "another controller's class and Gateway are not written",
  );
  assert.deepEqual(conditions(find(writes, 'GatewayClass', 'portcullis')).map(brief), [
    'Accepted=True/Accepted',
  ]);
  const edge = find(writes, 'Gateway', 'edge');
  assert.equal(edge.resourceVersion, '7');
  assert.deepEqual(edge.status['addresses'], [{ type: 'IPAddress', value: '203.0.113.7' }]);
  assert.deepEqual(conditions(edge).map(brief), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
  for (const c of conditions(edge)) {
    assert.equal(c.observedGeneration, 3);
    assert.equal(c.lastTransitionTime, '2026-03-01T10:00:00Z');
  }
  const [listener] = listenersOf(edge);
  assert.equal(listener?.name, 'https');
  assert.deepEqual(listener?.supportedKinds, [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }]);
  assert.equal(listener?.attachedRoutes, 1);
  assert.deepEqual(listener?.conditions.map(brief), [
    'Accepted=True/Accepted',
    'ResolvedRefs=True/ResolvedRefs',
    'Programmed=True/Programmed',
  ]);
  const [parent] = parentsOf(find(writes, 'HTTPRoute', 'store'));
  assert.deepEqual(parent?.parentRef, { name: 'edge' });
  assert.equal(parent?.controllerName, GATEWAY_CONTROLLER);
  assert.deepEqual(parent?.conditions.map(brief), [
    'Accepted=True/Accepted',
    'ResolvedRefs=True/ResolvedRefs',
  ]);
  assert.equal(parent?.conditions[0]?.observedGeneration, 5);
});

test('a status equal to the written one is not written again; a changed condition alone gets a new time', () => {
  const first = statusOf({
    gateways: [gateway()],
    httpRoutes: [httpRoute('store', { hostnames: ['store.example.com'], rules: [BACKEND] })],
  });
  const withStatus = <T extends object>(object: T, write: StatusWrite): T => ({
    ...object,
    status: write.status,
  });
  const written = {
    gatewayClasses: [withStatus(OUR_GATEWAY_CLASS, find(first.writes, 'GatewayClass', 'portcullis'))],
    gateways: [withStatus(gateway(), find(first.writes, 'Gateway', 'edge'))],
    httpRoutes: [
      withStatus(
        httpRoute('store', { hostnames: ['store.example.com'], rules: [BACKEND] }),
        find(first.writes, 'HTTPRoute', 'store'),
      ),
    ],
  };
  assert.deepEqual(statusOf(written, { now: LATER }).writes, [], 'nothing changed: nothing written');
  const stopped = statusOf(written, { now: LATER, serving: false }).writes;
  assert.deepEqual(
    stopped.map((w) => w.kind),
    ['Gateway'],
  );
  const edge = conditions(find(stopped, 'Gateway', 'edge'));
  assert.equal(brief(condition(edge, 'Programmed')), 'Programmed=False/Pending');
  assert.equal(condition(edge, 'Programmed').lastTransitionTime, '2026-03-01T11:00:00Z');
  assert.equal(condition(edge, 'Accepted').lastTransitionTime, '2026-03-01T10:00:00Z', 'unchanged: kept');
});

test('listener problems: unsupported protocol, a missing certificate, another namespace, route kinds', () => {
  const listeners: Gateway['spec']['listeners'] = [
    httpsListener(),
    { name: 'tcp', port: 9000, protocol: 'TCP' },
    {
      name: 'missing',
      port: 8443,
      protocol: 'HTTPS',
      hostname: 'm.example.com',
      tls: { certificateRefs: [{ name: 'nope' }] },
    },
    {
      name: 'foreign',
      port: 8444,
      protocol: 'HTTPS',
      tls: { certificateRefs: [{ name: 'x', namespace: 'other' }] },
    },
    { name: 'grpc', port: 80, protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'GRPCRoute' }] } },
  ];
  const { writes } = statusOf({
    gateways: [gateway(listeners)],
    httpRoutes: [httpRoute('store', { hostnames: ['store.example.com'], rules: [BACKEND] })],
  });
  const edge = find(writes, 'Gateway', 'edge');
  const byName = new Map(listenersOf(edge).map((l) => [l.name, l]));
  const briefs = (name: string): string[] => byName.get(name)?.conditions.map(brief) ?? [];
  assert.deepEqual(briefs('https'), [
    'Accepted=True/Accepted',
    'ResolvedRefs=True/ResolvedRefs',
    'Programmed=False/Pending',
  ]);
  assert.deepEqual(briefs('tcp'), [
    'Accepted=False/UnsupportedProtocol',
    'ResolvedRefs=True/ResolvedRefs',
    'Programmed=False/Invalid',
  ]);
  assert.deepEqual(byName.get('tcp')?.supportedKinds, []);
  assert.deepEqual(briefs('missing'), [
    'Accepted=True/Accepted',
    'ResolvedRefs=False/InvalidCertificateRef',
    'Programmed=False/Invalid',
  ]);
  assert.match(
    byName.get('missing')?.conditions[1]?.message ?? '',
    /^Gateway shop\/edge: spec\.listeners\[2\]\.tls\.certificateRefs\[0\]: Secret shop\/nope does not exist$/,
  );
  assert.equal(briefs('foreign')[1], 'ResolvedRefs=False/RefNotPermitted');
  assert.deepEqual(briefs('grpc').slice(0, 2), [
    'Accepted=True/Accepted',
    'ResolvedRefs=False/InvalidRouteKinds',
  ]);
  assert.deepEqual(byName.get('grpc')?.supportedKinds, []);
  assert.deepEqual(
    [...byName.values()].map((l) => l.attachedRoutes),
    [1, 0, 1, 1, 0],
    'every HTTP(S) listener that allows HTTPRoutes counts the route, accepted or not',
  );
  assert.deepEqual(conditions(edge).map(brief), [
    'Accepted=True/ListenersNotValid',
    'Programmed=False/Invalid',
  ]);
  assert.match(condition(conditions(edge), 'Programmed').message, /the last good config keeps serving$/);
  const only = statusOf({ gateways: [gateway([{ name: 'tcp', port: 9000, protocol: 'TCP' }])] }).writes;
  assert.equal(
    brief(condition(conditions(find(only, 'Gateway', 'edge')), 'Accepted')),
    'Accepted=False/ListenersNotValid',
  );
});

test("a route's problems: an annotation refuses it (Accepted False, the Event's text); backendRefs are ResolvedRefs False", () => {
  const annotated = statusOf(
    {
      gateways: [gateway()],
      httpRoutes: [
        httpRoute(
          'store',
          { hostnames: ['store.example.com'], rules: [BACKEND] },
          { 'portcullis.dev/no_such_option': 'x' },
        ),
      ],
    },
    { serving: true },
  );
  const problem = annotated.input.problems[0];
  assert.ok(problem);
  const [parent] = parentsOf(find(annotated.writes, 'HTTPRoute', 'store'));
  assert.deepEqual(parent?.conditions.map(brief), [
    'Accepted=False/UnsupportedValue',
    'ResolvedRefs=True/ResolvedRefs',
  ]);
  assert.equal(
    parent?.conditions[0]?.message,
    `${formatObjectProblem(problem)}; the last good routes keep serving`,
  );
  assert.match(parent?.conditions[0]?.message ?? '', /annotation portcullis\.dev\/no_such_option/);

  const backends = statusOf({
    gateways: [gateway()],
    httpRoutes: [
      httpRoute('missing', {
        hostnames: ['a.example.com'],
        rules: [{ backendRefs: [{ name: 'nope', port: 80 }] }],
      }),
      httpRoute('kind', {
        hostnames: ['b.example.com'],
        rules: [{ backendRefs: [{ group: 'example.com', kind: 'Bucket', name: 'b' }] }],
      }),
      httpRoute('foreign', {
        hostnames: ['c.example.com'],
        rules: [{ backendRefs: [{ name: 'web', namespace: 'other', port: 80 }] }],
      }),
    ],
  }).writes;
  const resolved = (name: string): string =>
    brief(condition(parentsOf(find(backends, 'HTTPRoute', name))[0]?.conditions ?? [], 'ResolvedRefs'));
  assert.equal(resolved('missing'), 'ResolvedRefs=False/BackendNotFound');
  assert.equal(resolved('kind'), 'ResolvedRefs=False/InvalidKind');
  assert.equal(resolved('foreign'), 'ResolvedRefs=False/RefNotPermitted');
  const missing = parentsOf(find(backends, 'HTTPRoute', 'missing'))[0]?.conditions ?? [];
  assert.equal(brief(condition(missing, 'Accepted')), 'Accepted=True/Accepted');
  assert.match(
    condition(missing, 'ResolvedRefs').message,
    /spec\.rules\[0\]\.backendRefs\[0\]: Service shop\/nope does not exist/,
  );
});

test('attachment: no such listener, not allowed from the namespace, no common hostname', () => {
  const { writes } = statusOf({
    gateways: [gateway()],
    httpRoutes: [
      httpRoute('section', { parentRefs: [{ name: 'edge', sectionName: 'http' }], rules: [BACKEND] }),
      {
        ...httpRoute('elsewhere', { rules: [BACKEND] }),
        metadata: { name: 'elsewhere', namespace: 'team' },
        spec: { parentRefs: [{ name: 'edge', namespace: 'shop' }], rules: [BACKEND] },
      },
      httpRoute('host', { hostnames: ['store.other.org'], rules: [BACKEND] }),
    ],
  });
  const accepted = (name: string): Condition =>
    condition(parentsOf(find(writes, 'HTTPRoute', name))[0]?.conditions ?? [], 'Accepted');
  assert.equal(brief(accepted('section')), 'Accepted=False/NoMatchingParent');
  assert.equal(brief(accepted('elsewhere')), 'Accepted=False/NotAllowedByListeners');
  assert.match(
    accepted('elsewhere').message,
    /^HTTPRoute team\/elsewhere: spec\.parentRefs\[0\]: .*namespace team/,
  );
  assert.equal(brief(accepted('host')), 'Accepted=False/NoMatchingListenerHostname');
  assert.equal(listenersOf(find(writes, 'Gateway', 'edge'))[0]?.attachedRoutes, 1, 'only `host` attaches');
});

test("other controllers' parents entries are kept; ours go when the parentRef does; untouched routes are not written", () => {
  const theirs = {
    parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'mesh' },
    controllerName: 'istio.io/gateway-controller',
    conditions: [
      {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message: '',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      },
    ],
  };
  const ours = {
    parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'edge' },
    controllerName: GATEWAY_CONTROLLER,
    conditions: [],
  };
  const route = (parentRefs: readonly ParentReference[], parents: unknown[]): HTTPRoute =>
    ({ ...httpRoute('store', { parentRefs, rules: [BACKEND] }), status: { parents } }) as HTTPRoute;
  const both = statusOf({
    gateways: [gateway()],
    httpRoutes: [
      route(
        [{ name: 'mesh' }, { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'edge' }],
        [theirs],
      ),
    ],
  }).writes;
  const parents = parentsOf(find(both, 'HTTPRoute', 'store'));
  assert.deepEqual(parents[0], theirs);
  assert.equal(parents[1]?.controllerName, GATEWAY_CONTROLLER);
  assert.equal(parents.length, 2);

  const gone = statusOf({
    gateways: [gateway()],
    httpRoutes: [route([{ name: 'mesh' }], [theirs, ours])],
  }).writes;
  assert.deepEqual(parentsOf(find(gone, 'HTTPRoute', 'store')), [theirs]);
  const untouched = statusOf({
    gateways: [gateway()],
    httpRoutes: [route([{ name: 'mesh' }], [theirs])],
  }).writes;
  assert.equal(untouched.filter((w) => w.kind === 'HTTPRoute').length, 0);
});

test('nothing served yet: Programmed Pending; the publish address as IP, host name, or left out', () => {
  const { writes } = statusOf({ gateways: [gateway()] }, { serving: false, address: undefined });
  const edge = find(writes, 'Gateway', 'edge');
  assert.equal(edge.status['addresses'], undefined);
  assert.deepEqual(conditions(edge).map(brief), ['Accepted=True/Accepted', 'Programmed=False/Pending']);
  assert.deepEqual(gatewayAddresses('2001:db8::1'), [{ type: 'IPAddress', value: '2001:db8::1' }]);
  assert.deepEqual(gatewayAddresses('edge.example.com'), [{ type: 'Hostname', value: 'edge.example.com' }]);
  assert.equal(gatewayAddresses('edge.example.com:443'), undefined, 'not an address the schema takes');
});
