// RouteRefused Events (route-events.ts) are written once per problem while it lasts: a status
// write that moves the object's resourceVersion (ours, on a Gateway or HTTPRoute) does not write it
// again; a new generation (a spec change), another problem or another outcome does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoreV1Api } from '@kubernetes/client-node';
import { RouteEvents } from '../../../src/kubernetes/watch/route-events.js';
import type { RouteObjects } from '../../../src/kubernetes/cluster-state.js';
import type { ObjectProblem } from '../../../src/kubernetes/object-problems.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { input, ingress, path } from './fixtures.js';

/** Records the Events RouteEvents asks the client to create (the only call it makes). */
function recordingCore(): { core: CoreV1Api; messages: string[]; versions: string[] } {
  const messages: string[] = [];
  const versions: string[] = [];
  const core = {
    createNamespacedEvent: async (request: {
      body: { message?: string; involvedObject: { resourceVersion?: string } };
    }) => {
      messages.push(request.body.message ?? '');
      versions.push(request.body.involvedObject.resourceVersion ?? '');
      return {};
    },
  } as unknown as CoreV1Api;
  return { core, messages, versions };
}

function objectsAt(resourceVersion: string, generation: number): RouteObjects {
  const app = ingress('app', [path('/', 'Prefix')]);
  const { secrets: _reader, ...routes } = input({
    ingresses: [{ ...app, metadata: { ...app.metadata, resourceVersion, generation } }],
  });
  return routes;
}

const PROBLEM: ObjectProblem = {
  object: { kind: 'Ingress', namespace: 'shop', name: 'app' },
  where: 'annotation portcullis.dev/polcy',
  message: 'unknown annotation',
};

test('one Event per problem, object generation and outcome; a resourceVersion bump alone writes none', async () => {
  const { core, messages, versions } = recordingCore();
  const events = new RouteEvents({ core, identity: 'replica-1', logger: silentLogger });
  const outcome = (): string => 'its last good version keeps serving';
  await events.report([PROBLEM], objectsAt('100', 1), outcome);
  assert.equal(messages.length, 1);
  assert.equal(versions[0], '100', 'the Event still names the version it was about');
  // A status patch (or a resync) moves the resourceVersion, not the generation: no second Event.
  await events.report([PROBLEM], objectsAt('101', 1), outcome);
  await events.report([PROBLEM], objectsAt('102', 1), outcome);
  assert.equal(messages.length, 1);
  // A new generation with the same problem is reported again.
  await events.report([PROBLEM], objectsAt('103', 2), outcome);
  assert.equal(messages.length, 2);
  // Another outcome for the same problem is reported again.
  await events.report([PROBLEM], objectsAt('104', 2), () => 'left out: it never built');
  assert.equal(messages.length, 3);
  assert.match(messages[2] ?? '', /unknown annotation; left out: it never built$/);
  // Fixed, then back: reported again.
  await events.report([], objectsAt('105', 2), outcome);
  await events.report([PROBLEM], objectsAt('106', 2), outcome);
  assert.equal(messages.length, 4);
});
