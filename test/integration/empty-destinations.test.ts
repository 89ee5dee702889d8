// A route with no destinations yet (`to: []`, what a Kubernetes Service with no ready endpoints
// becomes) through a real Envoy: it answers 503, and once a destination is added the same route
// and cluster forward to it: only the endpoints (EDS) and no route configuration changed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
} from '../../src/proto/type-urls.js';

let upstream: EchoUpstream;
let portcullis: TestPortcullis;

const ROUTE = { from: 'https://empty.test', allow_public_unauthenticated_access: true };

before(async () => {
  upstream = await startEchoUpstream({ id: 'upstream' });
  portcullis = await startPortcullis({ routes: [{ ...ROUTE, to: [] }] });
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

/** The versions of the snapshot's resources of `types`, by type and name. */
function versions(
  types: readonly string[] = [CLUSTER_TYPE, ROUTE_CONFIGURATION_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE],
): Record<string, string> {
  const snapshot = portcullis.running.store.current();
  assert.ok(snapshot, 'a snapshot is served');
  const out: Record<string, string> = {};
  for (const type of types as (keyof typeof snapshot.resources)[])
    for (const [name, resource] of snapshot.resources[type]) out[`${type} ${name}`] = resource.version;
  return out;
}

test('no destinations: 503 from Envoy; a destination added later arrives over EDS alone', async () => {
  const before = await proxyRequest(portcullis.proxyPort, 'empty.test', '/');
  assert.equal(before.status, 503);
  assert.equal(upstream.requests, 0);
  const shape = versions();
  const endpoints = versions([CLUSTER_LOAD_ASSIGNMENT_TYPE]);
  portcullis.writeConfig({ ...portcullis.baseConfig(), routes: [{ ...ROUTE, to: upstream.url }] });
  await portcullis.waitForEnvoyToApply('the route with a destination');
  const after = await proxyRequest(portcullis.proxyPort, 'empty.test', '/');
  assert.equal(after.status, 200);
  assert.equal(upstream.requests, 1);
  assert.deepEqual(versions(), shape, 'the same clusters, routes and scopes: only endpoints changed');
  assert.deepEqual(Object.keys(versions([CLUSTER_LOAD_ASSIGNMENT_TYPE])), Object.keys(endpoints));
  assert.notDeepEqual(versions([CLUSTER_LOAD_ASSIGNMENT_TYPE]), endpoints, 'the endpoints changed');
});
