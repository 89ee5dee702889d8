// The fast path's route facts (translate/decision-name.ts): which routes may have their allow
// replayed by Envoy (an allow that depends on the session alone) and the name a decision token
// gives a route, which changes with anything the allow or the upstream's headers depend on and
// with nothing else. Routes come from real configs through parse and translate.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { decisionName, slowPathReason } from '../../../src/translate/decision-name.js';
import type { IR, IRRoute } from '../../../src/ir/types.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

function irOf(routes: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}): IR {
  const parsed = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', ...extra, routes },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir, problems } = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.ok(ir, JSON.stringify(problems));
  return ir;
}

/** The route of `settings` (alone in its config). */
function routeOf(settings: Record<string, unknown>, extra: Record<string, unknown> = {}): IRRoute {
  const to = 'response' in settings ? {} : { to: 'http://10.0.0.1:8080' };
  const ir = irOf([{ from: 'https://app.test', ...to, ...settings }], extra);
  const route = ir.virtualHosts.flatMap((host) => host.routes)[0];
  assert.ok(route);
  return route;
}

const allow = (criteria: readonly Record<string, unknown>[]): Record<string, unknown> => ({
  policy: [{ allow: { or: criteria } }],
});

test('an allow that depends on the session alone may be replayed', () => {
  for (const settings of [
    { allow_any_authenticated_user: true },
    { allowed_users: ['ada@example.com'] },
    { allowed_domains: ['example.com'] },
    allow([{ email: { is: 'ada@example.com' } }, { 'claim/groups': { has: 'admins' } }]),
    {
      policy: [
        { allow: { and: [{ domain: { is: 'example.com' } }] }, deny: { or: [{ user: { is: 'eve' } }] } },
      ],
    },
  ]) {
    assert.equal(slowPathReason(routeOf(settings)), undefined, JSON.stringify(settings));
  }
});

test('routes whose decision depends on the request, or that never ask, are never replayed', () => {
  const cases: readonly (readonly [Record<string, unknown>, string])[] = [
    [{ allow_public_unauthenticated_access: true }, 'public'],
    [{ ...allow([{ email: { is: 'a@example.com' } }]), response: { status: 204 } }, 'answers-itself'],
    [allow([{ http_method: { is: 'GET' } }]), 'criterion:http_method'],
    [allow([{ http_path: { starts_with: '/admin' } }]), 'criterion:http_path'],
    [allow([{ source_ip: '10.0.0.0/8' }]), 'criterion:source_ip'],
    [
      { ...allow([{ email: { is: 'a@example.com' } }]), cors_allow_preflight: true },
      'criterion:cors_preflight',
    ],
    // A request criterion in a deny rule matters just as much: deny beats allow.
    [
      {
        policy: [
          {
            allow: { or: [{ email: { is: 'a@example.com' } }] },
            deny: { or: [{ http_method: { is: 'DELETE' } }] },
          },
        ],
      },
      'criterion:http_method',
    ],
  ];
  for (const [settings, reason] of cases) assert.equal(slowPathReason(routeOf(settings)), reason);
  const tcp = irOf([
    { from: 'tcp+https://db.test:5432', to: 'tcp://10.0.0.9:5432', allow_any_authenticated_user: true },
  ]).virtualHosts.flatMap((host) => host.routes)[0];
  assert.ok(tcp);
  assert.equal(slowPathReason(tcp), 'tcp');
});

test('the decision name changes with what the allow and the upstream headers depend on, and nothing else', () => {
  const base = { allowed_users: ['ada@example.com'] };
  const ir = irOf([{ from: 'https://app.test', to: 'http://10.0.0.1:8080', ...base }]);
  const route = routeOf(base);
  const name = decisionName(route, ir.authorize);
  assert.match(name, new RegExp(`^${route.id}\\.[0-9a-f]{16}${route.passIdentityHeaders ? '\\.i' : ''}$`));
  // Same policy, other upstreams, timeout and route name: the same name.
  const moved = irOf([
    { from: 'https://other.test', to: 'http://10.0.0.1:8080' },
    { from: 'https://app.test', to: 'http://10.0.0.2:9090', timeout: '5s', name: 'renamed', ...base },
  ]);
  const same = moved.virtualHosts.flatMap((host) => host.routes).find((r) => r.id === route.id);
  assert.ok(same);
  assert.equal(decisionName(same, moved.authorize), name);
  // Each of these renames it.
  const renamedBy: readonly [string, string][] = [
    ['policy', decisionName(routeOf({ allowed_users: ['bob@example.com'] }), ir.authorize)],
    [
      'identity headers',
      decisionName(routeOf({ ...base, pass_identity_headers: !route.passIdentityHeaders }), ir.authorize),
    ],
    ['set headers', decisionName(routeOf({ ...base, set_request_headers: { 'X-Team': 'a' } }), ir.authorize)],
    ['claim headers', decisionName(route, { ...ir.authorize, claimHeaders: { 'X-Email': 'email' } })],
    ['groups filter', decisionName(route, { ...ir.authorize, groupsFilter: ['admins'] })],
    ['issuer format', decisionName(route, { ...ir.authorize, issuerFormat: 'uri' })],
  ];
  for (const [what, other] of renamedBy) assert.notEqual(other, name, what);
  // The credential strip reads from the name alone whether the route sends identity headers.
  const sends = decisionName(routeOf({ ...base, pass_identity_headers: true }), ir.authorize);
  const sendsNone = decisionName(routeOf({ ...base, pass_identity_headers: false }), ir.authorize);
  assert.match(sends, /^[0-9a-f]{16}\.[0-9a-f]{16}\.i$/);
  assert.match(sendsNone, /^[0-9a-f]{16}\.[0-9a-f]{16}$/);
});
