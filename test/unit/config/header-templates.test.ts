// Templates in set_request_headers (config/header-templates.ts): the session's access token, ID
// token and claims by name; `$${` a literal `${`; every other `${` an error naming the header's
// key; none in Host, on a public route or in response headers (those reach the browser). Then
// translate: templated headers stay out of Envoy's static headers and their route off the fast path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHeaderValue, TEMPLATE_NAMES } from '../../../src/config/header-templates.js';
import { translate } from '../../../src/translate/translate.js';
import { compileRoute } from '../../../src/xds/compile/route-configuration.js';
import type { IRRoute } from '../../../src/ir/types.js';
import { assertProblem, base, problems, valid } from './helpers.js';
import { INTERNAL } from '../../support/mint-fixture.js';

const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });

test('a value splits into literal text and the templates it names; $${ is a literal ${', () => {
  assert.deepEqual(parseHeaderValue('Bearer ${portcullis.access_token}'), {
    parts: [{ kind: 'text', text: 'Bearer ' }, { kind: 'access_token' }],
  });
  assert.deepEqual(parseHeaderValue('${portcullis.id_token}'), { parts: [{ kind: 'id_token' }] });
  assert.deepEqual(parseHeaderValue('${portcullis.claims.realm_access.roles};$${x}'), {
    parts: [
      { kind: 'claim', claim: 'realm_access.roles' },
      { kind: 'text', text: ';${x}' },
    ],
  });
  assert.deepEqual(parseHeaderValue('plain $5 $'), { parts: [{ kind: 'text', text: 'plain $5 $' }] });
  assert.deepEqual(parseHeaderValue(''), { parts: [] });
  for (const bad of [
    '${portcullis.foo}',
    '${foo}',
    'Bearer ${portcullis.access_token',
    '${portcullis.claims.}',
    '${portcullis.claims.a b}',
    '${}',
  ])
    assert.ok(parseHeaderValue(bad).error !== undefined, bad);
});

test('an unknown or unclosed template is a validate error naming the header key and listing the names', () => {
  const unknown = problems(
    route({ set_request_headers: { Authorization: 'Bearer ${portcullis.acess_token}' } }),
  );
  assertProblem(unknown, 'routes[0].set_request_headers.Authorization', '${portcullis.acess_token}');
  for (const name of TEMPLATE_NAMES)
    assertProblem(unknown, 'routes[0].set_request_headers.Authorization', name);
  assert.equal(unknown.length, 1, `one problem for one bad value:\n${unknown.join('\n')}`);
  assertProblem(
    problems(route({ set_request_headers: { 'X-Token': '${portcullis.access_token' } })),
    'routes[0].set_request_headers.X-Token',
    'unclosed',
  );
  assertProblem(
    problems(route({ set_request_headers: { 'X-Env': '${HOME}' } })),
    'routes[0].set_request_headers.X-Env',
    'not a template Portcullis knows',
  );
});

test('templates are refused in Host, on public routes and in route and global response headers', () => {
  assertProblem(
    problems(route({ set_request_headers: { Host: '${portcullis.claims.email}' } })),
    'routes[0].set_request_headers.Host',
    'takes no template',
  );
  assertProblem(
    problems(
      route({
        allow_public_unauthenticated_access: true,
        set_request_headers: { Authorization: 'Bearer ${portcullis.access_token}' },
      }),
    ),
    'routes[0].set_request_headers.Authorization',
    'allow_public_unauthenticated_access',
  );
  assertProblem(
    problems(route({ set_response_headers: { 'X-Leak': '${portcullis.id_token}' } })),
    'routes[0].set_response_headers.X-Leak',
    'reach the browser',
  );
  assertProblem(
    problems(base({ set_response_headers: { 'X-Leak': '${portcullis.access_token}' } })),
    'set_response_headers.X-Leak',
    'reach the browser',
  );
  valid(base({ set_response_headers: { 'X-Literal': '$${not a template}' } }));
});

function irRoute(extra: Record<string, unknown>, global: Record<string, unknown> = {}): IRRoute {
  const config = valid({ ...route(extra), ...global });
  // With `internal` (as all-in-one translates), so the fast path is on and routes are named.
  const { ir, problems: translateProblems } = translate(config, {
    systemCaFile: '/ca.pem',
    internal: INTERNAL,
  });
  assert.ok(ir, JSON.stringify(translateProblems));
  const found = ir.virtualHosts.flatMap((host) => host.routes)[0];
  assert.ok(found);
  return found;
}

test('translate keeps templated headers out of Envoy static headers and the route off the fast path', () => {
  const ir = irRoute({
    allowed_domains: ['example.com'],
    set_request_headers: {
      Authorization: 'Bearer ${portcullis.access_token}',
      'X-Id-Token': '${portcullis.id_token}',
      'X-Groups': 'g=${portcullis.claims.groups}',
      'X-Static': 'cost $${price}',
    },
  });
  assert.deepEqual(ir.requestHeadersToSet, { 'X-Static': 'cost ${price}' });
  assert.deepEqual(ir.requestHeaderTemplates, {
    authorization: [{ kind: 'text', text: 'Bearer ' }, { kind: 'access_token' }],
    'x-id-token': [{ kind: 'id_token' }],
    'x-groups': [
      { kind: 'text', text: 'g=' },
      { kind: 'claim', claim: 'groups' },
    ],
  });
  assert.equal(ir.decisionName, undefined, 'a route sending tokens must not be replayed by Envoy');
  const compiled = JSON.stringify(compileRoute(ir));
  assert.ok(!compiled.includes('portcullis.'), `a template reached Envoy: ${compiled}`);
  assert.ok(!/authorization|x-id-token|x-groups/i.test(compiled), compiled);
  assert.ok(compiled.includes('cost ${price}'), compiled);

  const plain = irRoute({ allowed_domains: ['example.com'], set_request_headers: { 'X-A': 'b' } });
  assert.equal(plain.requestHeaderTemplates, undefined);
  assert.ok(plain.decisionName !== undefined, 'a route without templates keeps the fast path');
});

test('a route that answers by itself carries no templates, and global response headers unescape $${', () => {
  const answering = irRoute(
    {
      to: undefined,
      response: { status: 200, body: 'ok' },
      allowed_domains: ['example.com'],
      set_request_headers: { Authorization: 'Bearer ${portcullis.access_token}' },
    },
    { set_response_headers: { 'X-Note': 'a $${b}' } },
  );
  assert.equal(answering.requestHeaderTemplates, undefined);
  assert.deepEqual(answering.requestHeadersToSet, {});
  const config = valid(base({ set_response_headers: { 'X-Note': 'a $${b}' } }));
  const { ir } = translate(config, { systemCaFile: '/ca.pem' });
  assert.deepEqual(ir?.responseHeaders, { 'X-Note': 'a ${b}' });
});
