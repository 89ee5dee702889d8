// A reload does work in proportion to what changed: with the previous build given, a changed route
// is validated, translated, compiled and encoded again and nothing else is (counted in
// `GoodBuild.work`, never timed), unchanged routes give the identical IR and encoded objects (what
// a worker thread's deltas rely on), and whatever the edits, the result equals a fresh build's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  build,
  type BuildInput,
  type BuildResult,
  type GoodBuild,
} from '../../../src/runtime/build-pipeline.js';
import { RESOURCE_TYPES } from '../../../src/proto/type-urls.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { seededRandom } from '../../support/seeded-random.js';

type Route = Record<string, unknown>;
type Document = Record<string, unknown> & { routes: Route[] };

/** Hosts the generated routes share, several routes each, so a host holds changed and unchanged routes. */
const HOSTS = 400;

/**
 * Route `i`: on host `h<i mod HOSTS>` with its own prefix; public, or any signed-in user (those
 * take the fast path and get decision names); every 11th to a DNS name (STRICT_DNS), every 13th a
 * redirect (no cluster), every 17th a TCP route; two weighted upstreams with a health check.
 */
function route(i: number): Route {
  const host = `h${i % HOSTS}.example.com`;
  if (i % 17 === 0)
    return {
      from: `tcp+https://t${i}.example.com:22`,
      to: `tcp://10.1.${i % 250}.1:22`,
      allow_any_authenticated_user: true,
    };
  const access =
    i % 7 === 0 ? { allow_any_authenticated_user: true } : { allow_public_unauthenticated_access: true };
  if (i % 13 === 0)
    return {
      from: `https://${host}`,
      prefix: `/p${i}/`,
      redirect: { host_redirect: 'elsewhere.test' },
      ...access,
    };
  const upstream =
    i % 11 === 0 ? `http://svc${i}.internal:80` : `http://10.0.${i % 250}.${1 + (i % 200)}:8080`;
  return {
    from: `https://${host}`,
    prefix: `/p${i}/`,
    to: [`${upstream},3`, `http://10.2.${i % 250}.9:8080,1`],
    health_checks: [
      {
        timeout: '1s',
        interval: '10s',
        unhealthy_threshold: 2,
        healthy_threshold: 1,
        http_health_check: { path: '/healthz' },
      },
    ],
    ...access,
  };
}

function document(routes: number): Document {
  return { insecure_server: true, ...SIGN_IN, routes: Array.from({ length: routes }, (_, i) => route(i)) };
}

/** A config file in a fresh directory, and the input that builds whatever `write` last put there. */
function configFile(t: { after(fn: () => void): void }): { input: BuildInput; write(doc: Document): void } {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-incr-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configPath = join(dir, 'config.json');
  // Fixed generated secrets, as a long-running process has: builds agree only under the same ones.
  const generatedSecrets = { sharedSecret: Buffer.alloc(32, 1), cookieSecret: Buffer.alloc(32, 2) };
  return {
    input: { configPath, env: {}, translate: { systemCaFile: '/dev/null', generatedSecrets } },
    write: (doc) => writeFileSync(configPath, JSON.stringify(doc)),
  };
}

function good(result: BuildResult): GoodBuild {
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems.slice(0, 3)));
  return result;
}

/** The resources of `next` that are not the identical encoded objects of `before`, as `type name`. */
function reencoded(before: GoodBuild, next: GoodBuild): string[] {
  const out: string[] = [];
  for (const type of RESOURCE_TYPES) {
    for (const [name, entry] of next.snapshot.resources[type])
      if (before.snapshot.resources[type].get(name) !== entry)
        out.push(`${type.split('.').pop() ?? type} ${name}`);
  }
  return out.sort();
}

const ROUTES = 2000;

test('one changed route is validated, translated, compiled and encoded alone; the rest is identical', (t) => {
  const { input, write } = configFile(t);
  const doc = document(ROUTES);
  write(doc);
  const first = good(build(input));
  assert.equal(first.work.routesValidated, ROUTES);
  assert.equal(first.work.routesTranslated, ROUTES);

  // Route 5 (public, on h5) gets a heavier first upstream: its cluster's endpoints change, its route does not.
  doc.routes[5] = { ...doc.routes[5], to: ['http://10.0.5.6:8080,5', 'http://10.2.5.9:8080,1'] };
  write(doc);
  const second = good(build(input, first));
  assert.deepEqual(second.work, {
    routesValidated: 1,
    routesTranslated: 1,
    clustersCompiled: 1,
    hostsCompiled: 1,
    // The Cluster and its ClusterLoadAssignment (both keyed by the one IR cluster); h5's table
    // compiles to what it was (same content key), so its encoding is taken as it was.
    resourcesEncoded: 2,
  });
  const changedCluster = first.ir.virtualHosts.find((h) => h.name === 'h5.example.com')?.routes[0]
    ?.clusterName;
  assert.deepEqual(reencoded(first, second), [
    `Cluster ${changedCluster}`,
    `ClusterLoadAssignment ${changedCluster}`,
  ]);
  const clusterType = 'envoy.config.cluster.v3.Cluster';
  assert.equal(
    second.snapshot.resources[clusterType].get(changedCluster ?? '')?.version,
    first.snapshot.resources[clusterType].get(changedCluster ?? '')?.version,
    'the Cluster message holds no endpoints: same bytes, same version',
  );
  assert.equal(second.snapshot.version, good(build(input)).snapshot.version, 'equals a fresh build');

  // Identity: every other cluster and host is the very object the first build made.
  const firstClusters = new Map(first.ir.clusters.map((c) => [c.name, c]));
  for (const cluster of second.ir.clusters)
    if (cluster.name !== changedCluster) assert.equal(cluster, firstClusters.get(cluster.name), cluster.name);
  const firstHosts = new Map(first.ir.virtualHosts.map((h) => [h.name, h]));
  for (const host of second.ir.virtualHosts)
    if (host.name !== 'h5.example.com') assert.equal(host, firstHosts.get(host.name), host.name);
  assert.notEqual(
    second.ir.virtualHosts.find((h) => h.name === 'h5.example.com'),
    firstHosts.get('h5.example.com'),
  );

  // A policy change on a route of h7 (route 7: any signed-in user, fast path): its decision name
  // changes, so h7's table is encoded again, and its cluster is the same object as before.
  doc.routes[7] = {
    ...doc.routes[7],
    allow_any_authenticated_user: undefined,
    allowed_users: ['a@example.com'],
  };
  write(doc);
  const third = good(build(input, second));
  assert.deepEqual(third.work, {
    routesValidated: 1,
    routesTranslated: 1,
    clustersCompiled: 1,
    hostsCompiled: 1,
    resourcesEncoded: 1,
  });
  assert.deepEqual(reencoded(second, third), ['RouteConfiguration ingress/h7.example.com']);
  assert.equal(third.snapshot.version, good(build(input)).snapshot.version);
});

test('an unchanged rebuild does no work and gives the identical objects', (t) => {
  const { input, write } = configFile(t);
  write(document(ROUTES));
  const first = good(build(input));
  const again = good(build(input, first));
  assert.deepEqual(again.work, {
    routesValidated: 0,
    routesTranslated: 0,
    clustersCompiled: 0,
    hostsCompiled: 0,
    resourcesEncoded: 0,
  });
  assert.deepEqual(reencoded(first, again), []);
  assert.equal(again.snapshot, again.snapshot);
  assert.equal(again.snapshot.version, first.snapshot.version);
  again.ir.clusters.forEach((cluster, index) => assert.equal(cluster, first.ir.clusters[index]));
  again.ir.virtualHosts.forEach((host, index) => assert.equal(host, first.ir.virtualHosts[index]));
});

test('a global change redoes the routes it reaches; encodings stay where the bytes do', (t) => {
  const { input, write } = configFile(t);
  const doc = document(ROUTES);
  write(doc);
  const first = good(build(input));
  // Every forwarding route's timeout comes from the default: every route and table is made again.
  write({ ...doc, default_upstream_timeout: '17s' });
  const next = good(build(input, first));
  assert.equal(next.work.routesValidated, 0, 'route texts are unchanged');
  assert.equal(next.work.routesTranslated, ROUTES);
  assert.equal(next.work.clustersCompiled, next.ir.clusters.length);
  assert.equal(next.work.hostsCompiled, next.ir.virtualHosts.length);
  // Clusters compile to the same bytes (same content key): only the tables are encoded again.
  const tables = next.snapshot.resources['envoy.config.route.v3.RouteConfiguration'].size;
  assert.ok(next.work.resourcesEncoded <= tables, `${next.work.resourcesEncoded} encoded, ${tables} tables`);
  assert.equal(next.snapshot.version, good(build(input)).snapshot.version);
});

/** Edits the sequence applies in turn, each at a random place; `shadow` and `own-host` fail, and are undone. */
const EDITS = [
  'weight',
  'policy',
  'prefix',
  'delete',
  'insert',
  'append',
  'swap',
  'global',
  'wildcard',
  'shadow',
  'own-host',
] as const;

test('a random sequence of edits, built each from the last good build, equals fresh builds', (t) => {
  const { input, write } = configFile(t);
  const next = seededRandom(36);
  const pick = (n: number): number => Math.floor(next() * n);
  let doc = document(1500);
  write(doc);
  let last = good(build(input));
  let fresh = 10_000;
  for (let step = 0; step < 2 * EDITS.length; step += 1) {
    const edit = EDITS[step % EDITS.length] as (typeof EDITS)[number];
    const routes = [...doc.routes];
    // Edits of matchers and policy go to an HTTP route (a TCP route takes no prefix).
    let at = pick(routes.length);
    while (String(routes[at]?.from).startsWith('tcp+')) at = (at + 1) % routes.length;
    let candidate: Document = { ...doc, routes };
    let keep = true;
    if (edit === 'weight')
      routes[at] = { ...routes[at], to: [`http://10.9.0.${1 + pick(200)}:80,${1 + pick(9)}`] };
    else if (edit === 'policy')
      routes[at] = {
        ...routes[at],
        allow_public_unauthenticated_access: undefined,
        allow_any_authenticated_user: undefined,
        allowed_domains: ['example.com'],
      };
    else if (edit === 'prefix') routes[at] = { ...routes[at], prefix: `/q${(fresh += 1)}/` };
    else if (edit === 'delete') routes.splice(at, 1);
    else if (edit === 'insert') routes.splice(at, 0, route((fresh += 1)));
    else if (edit === 'append') routes.push(route((fresh += 1)));
    else if (edit === 'swap') [routes[at], routes[0]] = [routes[0] as Route, routes[at] as Route];
    else if (edit === 'global') candidate = { ...candidate, jwt_claims_headers: { 'x-step': `step${step}` } };
    else if (edit === 'wildcard') {
      // A wildcard host turns per-host scoping off (single RouteConfiguration); a second one back on.
      const index = routes.findIndex((r) => String(r.from).includes('*'));
      if (index === -1)
        routes.push({
          from: 'https://*.w.example.com',
          to: 'http://10.3.0.1:80',
          allow_public_unauthenticated_access: true,
        });
      else routes.splice(index, 1);
    } else {
      keep = false;
      const target = routes.find((r) => typeof r.prefix === 'string' && r.redirect === undefined) as Route;
      routes.push(
        edit === 'shadow'
          ? { ...target, to: 'http://10.4.0.1:80' }
          : {
              from: SIGN_IN.authenticate_service_url,
              to: 'http://10.4.0.2:80',
              allow_public_unauthenticated_access: true,
            },
      );
    }
    write(candidate);
    const incremental = build(input, last);
    const cold = build(input);
    assert.equal(incremental.ok, cold.ok, `step ${step} ${edit}`);
    if (!incremental.ok || !cold.ok) {
      assert.equal(
        keep,
        false,
        `step ${step} ${edit}: ${JSON.stringify(!incremental.ok && incremental.problems)}`,
      );
      assert.deepEqual(incremental, cold, `step ${step} ${edit}: the same problems`);
      write(doc);
      continue;
    }
    assert.equal(incremental.snapshot.version, cold.snapshot.version, `step ${step} ${edit}`);
    assert.deepEqual(incremental.snapshot.typeVersions, cold.snapshot.typeVersions, `step ${step} ${edit}`);
    if (step % 4 === 0) assert.deepEqual(incremental.ir, cold.ir, `step ${step} ${edit}`);
    for (const type of RESOURCE_TYPES)
      assert.deepEqual(
        [...incremental.snapshot.resources[type].keys()],
        [...cold.snapshot.resources[type].keys()],
        `step ${step} ${edit} ${type} order`,
      );
    if (keep) {
      doc = candidate;
      last = incremental;
    } else write(doc);
  }
});
