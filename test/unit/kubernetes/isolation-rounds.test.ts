// The build rounds of a watcher pass (isolation-rounds.ts): they go on while each round changes an
// object's fate (not a fixed number), and route problems no round can set aside become a problem of
// the settings rather than a pass that silently publishes nothing. A problem of a last accepted
// version is reported as that version's, for the object as a whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteObjects } from '../../../src/kubernetes/cluster-state.js';
import {
  acceptedObjects,
  liveInputs,
  refKey,
  type Substitution,
} from '../../../src/kubernetes/last-accepted.js';
import { isolationRounds } from '../../../src/kubernetes/isolation-rounds.js';
import type { ObjectProblem } from '../../../src/kubernetes/object-problems.js';
import type { Ingress } from '../../../src/kubernetes/objects.js';
import { input, ingress, path } from './fixtures.js';

function routesOf(ingresses: Ingress[]): RouteObjects {
  const { secrets: _reader, ...routes } = input({ ingresses });
  return routes;
}

/** An Ingress whose version says whether it builds (the fake build reads the annotation). */
function app(name: string, builds: boolean, resourceVersion: string): Ingress {
  const object = ingress(name, [path('/', 'Prefix')], {
    host: `${name}.example.com`,
    annotations: { builds: String(builds) },
  });
  return { ...object, metadata: { ...object.metadata, resourceVersion } };
}

/**
 * A build that, like validate, finds one problem per round (the first object that does not build),
 * so isolating several objects takes several rounds.
 */
function oneProblemPerRound(calls: Substitution[]) {
  return async (inputs: Substitution | undefined, found: ObjectProblem[]) => {
    if (inputs !== undefined) calls.push(inputs);
    const bad = inputs?.routes.ingresses.find((i) => i.metadata.annotations?.['builds'] === 'false');
    if (bad === undefined) return { ok: true, problems: [] };
    found.push({
      object: { kind: 'Ingress', namespace: 'shop', name: bad.metadata.name },
      where: `spec.rules[0] (version ${bad.metadata.resourceVersion})`,
      message: 'does not build',
    });
    return { ok: false, problems: [] };
  };
}

test('rounds go on while fates change: 3 objects whose last good versions fail too need 7 builds', async () => {
  const names = ['a', 'b', 'c'];
  const accepted = acceptedObjects(routesOf(names.map((name) => app(name, false, '1'))), new Map());
  const live = routesOf(names.map((name) => app(name, false, '2')));
  const calls: Substitution[] = [];
  const result = await isolationRounds(liveInputs(live, new Map()), accepted, oneProblemPerRound(calls));
  assert.equal(result.built.ok, true, 'a build served in the end');
  assert.equal(result.rounds, 7, 'more than the 4 rounds a fixed bound allowed');
  assert.equal(result.unresolved, undefined);
  assert.deepEqual(result.inputs?.routes.ingresses, []);
  for (const name of names)
    assert.equal(
      result.inputs?.fates.get(refKey({ kind: 'Ingress', namespace: 'shop', name })),
      'previous-fails',
    );
  assert.equal(result.routeProblems.length, 6);
  // A problem found in a last accepted version says so, and carries no field of the live object.
  const about = (name: string) =>
    result.routeProblems
      .filter((problem) => problem.object.name === name)
      .map(({ where, message }) => ({ where, message }));
  assert.deepEqual(about('a'), [
    { where: 'spec.rules[0] (version 2)', message: 'does not build' },
    { where: undefined, message: 'its last good version: spec.rules[0] (version 1): does not build' },
  ]);
});

test('the other objects change while one is left out; a good object is never touched', async () => {
  const accepted = acceptedObjects(routesOf([app('a', true, '1'), app('b', true, '1')]), new Map());
  const live = routesOf([app('a', false, '2'), app('b', true, '2')]);
  const result = await isolationRounds(liveInputs(live, new Map()), accepted, oneProblemPerRound([]));
  assert.equal(result.built.ok, true);
  assert.equal(result.rounds, 2);
  assert.deepEqual(
    result.inputs?.routes.ingresses.map((i) => [i.metadata.name, i.metadata.resourceVersion]),
    [
      ['a', '1'],
      ['b', '2'],
    ],
  );
});

test('route problems no substitution removes are a settings problem, not a silent pass', async () => {
  const live = routesOf([app('a', true, '2')]);
  let builds = 0;
  const result = await isolationRounds(liveInputs(live, new Map()), new Map(), async (_inputs, found) => {
    builds += 1;
    found.push({ object: { kind: 'IngressClass', name: 'portcullis' }, message: 'is odd' });
    return { ok: false, problems: [] };
  });
  assert.equal(builds, 1);
  assert.equal(result.built.ok, false);
  assert.equal(result.unresolved?.path, '');
  assert.match(result.unresolved?.message ?? '', /IngressClass portcullis/);
  assert.match(result.unresolved?.message ?? '', /no config with the cluster's other changes was built/);
  assert.equal(result.routeProblems.length, 1, 'the problem itself is still reported on its object');
});

test('a settings problem ends the rounds at once (no route object is set aside for it)', async () => {
  const live = routesOf([app('a', false, '2')]);
  let builds = 0;
  const result = await isolationRounds(liveInputs(live, new Map()), new Map(), async (_inputs, found) => {
    builds += 1;
    found.push({ object: { kind: 'Ingress', namespace: 'shop', name: 'a' }, message: 'x' });
    return { ok: false, problems: [{ path: 'spec.x', message: 'is wrong' }] };
  });
  assert.equal(builds, 1);
  assert.equal(result.unresolved, undefined);
  assert.deepEqual(result.built.problems, [{ path: 'spec.x', message: 'is wrong' }]);
});
