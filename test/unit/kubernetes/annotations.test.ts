// The portcullis.dev/* annotations: derived from the route option table (every route key is an
// annotation or listed with why not), each value read by its option's type, unknown names refused
// with a did-you-mean, and every problem naming the object and the annotation.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ROUTE_KEYS } from '../../../src/config/route-option-table.js';
import { ANNOTATIONS, NOT_ANNOTATIONS, readAnnotations } from '../../../src/kubernetes/annotations.js';
import { formatObjectProblem } from '../../../src/kubernetes/object-problems.js';

const INGRESS = { kind: 'Ingress', namespace: 'shop', name: 'app' };

function read(annotations: Record<string, string>): ReturnType<typeof readAnnotations> {
  return readAnnotations(INGRESS, annotations);
}

test('every route option is an annotation or is listed with why not, never both', () => {
  const annotated = ANNOTATIONS.map((spec) => spec.key);
  assert.deepEqual([...annotated, ...Object.keys(NOT_ANNOTATIONS)].sort(), [...ROUTE_KEYS].sort());
  for (const key of Object.keys(NOT_ANNOTATIONS))
    assert.ok(ROUTE_KEYS.includes(key), `${key} is a route key`);
  assert.ok(annotated.includes('policy') && annotated.includes('allowed_domains'));
  // Secrets and controller file paths are never annotations.
  for (const key of [
    'idp_client_secret',
    'tls_client_key',
    'tls_custom_ca_file',
    'allow_restricted_upstream',
  ])
    assert.ok(!annotated.includes(key), key);
});

test('values are read by type: booleans, durations, YAML lists or one item, YAML maps and policies', () => {
  const out = read({
    'portcullis.dev/pass_identity_headers': 'true',
    'portcullis.dev/allow_websockets': 'false',
    'portcullis.dev/timeout': '90s',
    'portcullis.dev/allowed_domains': 'example.com',
    'portcullis.dev/allowed_users': '- ada@example.com\n- bob@example.com\n',
    'portcullis.dev/set_request_headers': 'X-Team: payments\nX-Env: "prod"',
    'portcullis.dev/policy': 'allow:\n  or:\n    - domain:\n        is: example.com\n',
    'portcullis.dev/rewrite_response_headers':
      '- header: Location\n  prefix: http://internal:8080/\n  value: https://shop.example.com/\n',
    'portcullis.dev/identity_provider': 'corp',
    'nginx.ingress.kubernetes.io/rewrite-target': '/',
  });
  assert.deepEqual(out.problems, []);
  assert.deepEqual(out.values, {
    allow_websockets: false,
    allowed_domains: ['example.com'],
    allowed_users: ['ada@example.com', 'bob@example.com'],
    pass_identity_headers: true,
    policy: { allow: { or: [{ domain: { is: 'example.com' } }] } },
    set_request_headers: { 'X-Team': 'payments', 'X-Env': 'prod' },
    rewrite_response_headers: [
      { header: 'Location', prefix: 'http://internal:8080/', value: 'https://shop.example.com/' },
    ],
    identity_provider: 'corp',
    timeout: '90s',
  });
  assert.equal(out.sources.policy, 'annotation portcullis.dev/policy');
});

test('bad values, unknown names and keys that are not annotations are problems naming the annotation', () => {
  const out = read({
    'portcullis.dev/allow_any_authenticated_user': 'yes',
    'portcullis.dev/allowed_domains': 'a.example.com, b.example.com',
    'portcullis.dev/policy': 'allow: [unclosed',
    'portcullis.dev/polcy': 'allow: {}',
    'portcullis.dev/idp_client_secret': 'hunter2',
    'portcullis.dev/set_request_headers': '[a, b]',
  });
  const messages = out.problems.map(formatObjectProblem);
  assert.equal(
    messages[0],
    'Ingress shop/app: annotation portcullis.dev/allow_any_authenticated_user: expected "true" or "false", got "yes"',
  );
  assert.equal(
    messages[1],
    'Ingress shop/app: annotation portcullis.dev/allowed_domains: expected a YAML list: write ["a.example.com", "b.example.com"]',
  );
  assert.equal(
    messages[2],
    'Ingress shop/app: annotation portcullis.dev/idp_client_secret: idp_client_secret is not set by an annotation: a secret: annotations are readable by anyone who can read the object',
  );
  assert.equal(
    messages[3],
    'Ingress shop/app: annotation portcullis.dev/polcy: unknown Portcullis annotation (did you mean portcullis.dev/policy?)',
  );
  assert.match(messages[4] ?? '', /^Ingress shop\/app: annotation portcullis.dev\/policy: not valid YAML: /);
  assert.equal(messages.length, 5);
  assert.ok(!messages.join('\n').includes('hunter2'), 'an annotation value is never echoed');
  // A map where a map is expected passes through; parseConfig judges its shape (see route-source.test.ts).
  assert.deepEqual(out.values.set_request_headers, ['a', 'b']);
});

test('docs/kubernetes.md names every annotation and every route option that is not one', () => {
  const doc = readFileSync(new URL('../../../docs/kubernetes.md', import.meta.url), 'utf8');
  for (const spec of ANNOTATIONS) assert.ok(doc.includes(`\`${spec.annotation}\``), spec.annotation);
  for (const key of Object.keys(NOT_ANNOTATIONS)) assert.ok(doc.includes(`\`${key}\``), key);
});

test("an annotation may not send the user's identity-provider tokens upstream; claims may go", () => {
  const refused = read({
    'portcullis.dev/set_request_headers': 'Authorization: "Bearer ${portcullis.access_token}"',
  });
  assert.deepEqual(refused.problems.map(formatObjectProblem), [
    "Ingress shop/app: annotation portcullis.dev/set_request_headers: Authorization: sends the signed-in user's identity-provider token upstream, which a Kubernetes object may not do (anyone who can write it would receive every visitor's tokens); give such a route in the config file",
  ]);
  assert.equal(
    read({ 'portcullis.dev/set_request_headers': 'X-Id: ${portcullis.id_token}' }).problems.length,
    1,
  );
  const claims = read({ 'portcullis.dev/set_request_headers': 'X-Team: ${portcullis.claims.team}' });
  assert.deepEqual(claims.problems, []);
  assert.deepEqual(claims.values.set_request_headers, { 'X-Team': '${portcullis.claims.team}' });
});
