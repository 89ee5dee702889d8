// The status written for a build outcome, and the cluster state -> document step: conditions,
// observedGeneration, errors by field, transition times kept, and a missing object or Secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sameStatus, settingsStatus } from '../../../src/kubernetes/settings-status.js';
import { desiredConfig, secretData } from '../../../src/kubernetes/cluster-state.js';

const T1 = new Date('2026-11-29T10:00:00.123Z');
const T2 = new Date('2026-11-29T11:00:00.000Z');

test('valid: Valid and Ready True at the generation; no errors', () => {
  const status = settingsStatus({ generation: 4, problems: [], serving: true }, undefined, T1);
  assert.equal(status.observedGeneration, 4);
  assert.deepEqual(
    status.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration, c.lastTransitionTime]),
    [
      ['Valid', 'True', 'Valid', 4, '2026-11-29T10:00:00Z'],
      ['Ready', 'True', 'InForce', 4, '2026-11-29T10:00:00Z'],
    ],
  );
  assert.deepEqual(status.errors, []);
});

test('refused: every problem by field; Ready says whether the last good settings serve', () => {
  const problems = [
    { path: 'spec.identityProvider.url', message: 'is not a URL' },
    { path: '', message: 'the object does not exist' },
  ];
  const serving = settingsStatus({ generation: 5, problems, serving: true }, undefined, T1);
  assert.deepEqual(serving.errors, [
    { field: 'spec.identityProvider.url', message: 'is not a URL' },
    { field: 'spec', message: 'the object does not exist' },
  ]);
  const valid = serving.conditions.find((c) => c.type === 'Valid');
  assert.equal(valid?.status, 'False');
  assert.match(valid?.message ?? '', /spec\.identityProvider\.url: is not a URL/);
  assert.equal(serving.conditions.find((c) => c.type === 'Ready')?.reason, 'ChangeRefused');
  const none = settingsStatus({ generation: 5, problems, serving: false }, undefined, T1);
  assert.equal(none.conditions.find((c) => c.type === 'Ready')?.reason, 'NoValidSettings');
});

test('an unchanged condition keeps its lastTransitionTime; an equal status is not written again', () => {
  const first = settingsStatus({ generation: 1, problems: [], serving: true }, undefined, T1);
  const again = settingsStatus({ generation: 2, problems: [], serving: true }, first, T2);
  assert.equal(again.conditions[0]?.lastTransitionTime, '2026-11-29T10:00:00Z');
  const flipped = settingsStatus(
    { generation: 3, problems: [{ path: 'spec', message: 'x' }], serving: true },
    again,
    T2,
  );
  assert.equal(flipped.conditions[0]?.lastTransitionTime, '2026-11-29T11:00:00Z');
  const same = settingsStatus({ generation: 2, problems: [], serving: true }, again, T2);
  assert.ok(sameStatus(same, JSON.parse(JSON.stringify(again))));
  assert.ok(!sameStatus(flipped, again));
});

test('cluster state -> document: Secrets read from the state; a missing object or Secret is a problem', () => {
  const missing = desiredConfig({ settings: undefined, secrets: new Map(), namespace: 'ns' });
  assert.equal(missing.document, undefined);
  assert.match(missing.problems[0]?.message ?? '', /Portcullis global object does not exist/);
  const spec = {
    authenticate: { url: 'https://auth.example.com' },
    identityProvider: { url: 'https://idp.example.com', secret: { name: 'idp' } },
  };
  const settings = { metadata: { name: 'global', generation: 7 }, spec };
  const noSecret = desiredConfig({ settings, secrets: new Map([['ns/idp', undefined]]), namespace: 'ns' });
  assert.equal(noSecret.generation, 7);
  assert.deepEqual(noSecret.secrets, [{ namespace: 'ns', name: 'idp' }]);
  assert.deepEqual(noSecret.problems, [
    { path: 'spec.identityProvider.secret', message: 'Secret ns/idp not found' },
  ]);
  const data = {
    client_id: Buffer.from('portcullis').toString('base64'),
    client_secret: Buffer.from('s3cret\n').toString('base64'),
  };
  const found = desiredConfig({ settings, secrets: new Map([['ns/idp', { data }]]), namespace: 'ns' });
  assert.deepEqual(found.problems, []);
  assert.equal(found.document?.idp_client_id, 'portcullis');
  assert.equal(found.document?.idp_client_secret, 's3cret');
  assert.equal(Buffer.from(secretData({ data }).client_id ?? []).toString(), 'portcullis');
  assert.deepEqual(
    found
      .fieldProblems([{ path: 'idp_provider_url', message: 'idp_provider_url is wrong' }])
      .map((p) => p.path),
    ['spec.identityProvider.url'],
  );
});
