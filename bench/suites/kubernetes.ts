import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Context } from '../lib/context.js';
import { configYaml } from '../lib/config-gen.js';
import { pollUntilStatus, statusOf, sweep } from '../lib/http.js';
import { startCli } from '../lib/portcullis-process.js';
import { cli, productEnv } from '../lib/product.js';
import { until, whileRunning, type Started } from '../lib/processes.js';
import type { SuiteResult } from '../lib/report.js';
import { loopbackPorts, waitServing, type Ports } from '../lib/serving.js';
import { round, summarize } from '../lib/stats.js';
import type { KubeClient, KubeObject, KubeRef } from '../../test/support/kube-client.js';
import { kubeBinary, startKubeCluster, type KubeCluster } from '../../test/support/kube-cluster.js';
import { applySettings, NS, webService } from '../../test/support/kube-route-objects.js';
import { SIGN_IN_YAML } from '../../test/support/sign-in-config.js';

/** Issue 38: an annotation change serving within 1.5x of the same change made through the config file. */
const RATIO_BUDGET = 1.5;
const PUBLIC = 'portcullis.dev/allow_public_unauthenticated_access';
const ANY_USER = 'portcullis.dev/allow_any_authenticated_user';
const SHARED_SECRET = Buffer.alloc(32, 38).toString('base64');
/** Concurrent applies to the API server (as `kubectl apply` of a big manifest, more or less). */
const APPLY_PARALLEL = 8;

function host(index: number): string {
  return `k${index}.bench.test`;
}

/** True for a status proving a route for the host is served: anything but no route (404) or no answer (0). */
function routed(status: number): boolean {
  return status !== 404 && status !== 0;
}

/** True for the answer of a route needing a user to a request without a session. */
function needsUser(status: number): boolean {
  return status === 302 || status === 401;
}

/** Ingress `r<index>` of class `portcullis` for host(index) to Service `web`, with `annotations`. */
function ingress(index: number, annotations: Record<string, string>): KubeObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name: `r${index}`, namespace: NS, annotations } as KubeRef['metadata'],
    spec: {
      ingressClassName: 'portcullis',
      rules: [
        {
          host: host(index),
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    },
  };
}

/** The same route as a config-file entry: no upstream (`to: []`, 503), public or needing a user. */
function routeYaml(index: number, needUser: boolean): string {
  const policy = needUser ? 'allow_any_authenticated_user' : 'allow_public_unauthenticated_access';
  return `  - from: https://${host(index)}\n    to: []\n    ${policy}: true\n`;
}

/** Runs `work(0..count-1)` with `parallel` at a time. */
async function inParallel(
  count: number,
  parallel: number,
  work: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) await work(index);
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** The hosts probed for "every route serving": the last applied and every 50th. */
function sampleHosts(count: number): string[] {
  const step = Math.max(1, Math.floor(count / 20));
  const hosts = Array.from({ length: Math.ceil(count / step) }, (_, i) => host(i * step));
  return [host(count - 1), ...hosts];
}

/**
 * Resolves with `performance.now()` once every sample host answers through a route (not 404),
 * polling every 20 ms; then a request to every host proves none is missing.
 */
async function allServing(process: Started, ports: Ports, count: number, what: string): Promise<number> {
  const sample = sampleHosts(count);
  await whileRunning(
    process,
    until(
      async () => (await Promise.all(sample.map((h) => statusOf(ports.proxyPort, h)))).every(routed),
      `${what}: ${count} routes to be served`,
      { intervalMs: 20, timeoutMs: 300_000 },
    ),
  );
  const servedAt = performance.now();
  const counts = await sweep(
    ports.proxyPort,
    Array.from({ length: count }, (_, i) => host(i)),
  );
  const missing = [...counts].filter(([status]) => !routed(status));
  if (missing.length > 0) throw new Error(`${what}: routes missing, statuses ${JSON.stringify([...counts])}`);
  return servedAt;
}

/** One side of the comparison: how it applies all routes and how it changes one. */
interface Side {
  readonly name: 'kubernetes' | 'file';
  readonly process: Started;
  readonly ports: Ports;
  /** Starts applying all `count` routes (public); resolves when the last is handed over. */
  applyAll(): Promise<void>;
  /** Makes route `index` need a user; resolves when the change is handed over. */
  needUser(index: number): Promise<void>;
}

/** `portcullis kubernetes` on the test API server (`cluster`), with no Ingress yet, serving. */
async function kubeSide(context: Context, cluster: KubeCluster, count: number): Promise<Side> {
  const admin: KubeClient = cluster.admin;
  await applySettings(admin);
  await admin.apply({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: 'portcullis' },
    spec: { controller: 'portcullis.dev/ingress-controller' },
  });
  // No EndpointSlice: every route is `to: []` (503), which proves the route is served.
  await admin.apply(webService(8080));
  const ports = await loopbackPorts();
  const { command, args } = cli(context.target, [
    'kubernetes',
    '--kubeconfig',
    cluster.kubeconfigPath,
    '--namespace',
    NS,
  ]);
  const process = context.groups.start({
    command,
    args,
    cwd: context.target.root,
    env: {
      ...productEnv(context.target),
      POD_NAME: 'bench',
      ADDRESS: ports.address,
      GRPC_ADDRESS: ports.grpcAddress,
      ENVOY_ADMIN_ADDRESS: ports.adminAddress,
    },
    logFile: join(context.workDir, 'kubernetes.log'),
    timeoutMs: 1_200_000,
  });
  await waitServing(process, ports, { clusters: 0, hosts: [], intervalMs: 100, timeoutMs: 120_000 });
  return {
    name: 'kubernetes',
    process,
    ports,
    applyAll: () => inParallel(count, APPLY_PARALLEL, (i) => admin.apply(ingress(i, { [PUBLIC]: 'true' }))),
    needUser: async (index) => {
      await admin.apply(ingress(index, { [ANY_USER]: 'true' }));
    },
  };
}

/** `portcullis -c <file>` with no routes yet, serving; changes are a new file renamed over it. */
async function fileSide(context: Context, count: number): Promise<Side> {
  const ports = await loopbackPorts();
  const configPath = join(context.workDir, 'kubernetes-baseline.yaml');
  const extra = `shared_secret: ${SHARED_SECRET}\n${SIGN_IN_YAML}`;
  writeFileSync(configPath, configYaml(ports, [], extra));
  const process = startCli(context, configPath, 'kubernetes-baseline', 1_200_000);
  await waitServing(process, ports, { clusters: 0, hosts: [], intervalMs: 100, timeoutMs: 120_000 });
  const routes = Array.from({ length: count }, (_, i) => routeYaml(i, false));
  const write = (): void => {
    writeFileSync(`${configPath}.tmp`, configYaml(ports, routes, extra));
    renameSync(`${configPath}.tmp`, configPath);
  };
  return {
    name: 'file',
    process,
    ports,
    applyAll: async () => write(),
    needUser: async (index) => {
      routes[index] = routeYaml(index, true);
      write();
    },
  };
}

/** Milliseconds from starting to hand all routes to `side` to the last handed over, and to every route serving. */
async function applyAllMs(side: Side, count: number): Promise<{ handedOver: number; serving: number }> {
  const started = performance.now();
  await side.applyAll();
  const handedOver = performance.now() - started;
  return { handedOver, serving: (await allServing(side.process, side.ports, count, side.name)) - started };
}

/** Milliseconds from handing over "route `index` needs a user" to its first 302/401 (polled every 2 ms). */
async function changeMs(side: Side, index: number): Promise<number> {
  const before = await statusOf(side.ports.proxyPort, host(index));
  if (before !== 503)
    throw new Error(`${side.name}: ${host(index)} answered ${before} before the change, not 503`);
  const started = performance.now();
  await side.needUser(index);
  const served = await whileRunning(
    side.process,
    pollUntilStatus(side.ports.proxyPort, host(index), needsUser, '302 or 401', {
      intervalMs: 2,
      timeoutMs: 60_000,
    }),
  );
  return served - started;
}

function skipped(reason: string): SuiteResult {
  return {
    name: 'kubernetes',
    how: `skipped: ${reason}`,
    measurements: [
      { what: 'kubernetes: skipped', budget: 'runs', value: NaN, unit: '', pass: null, detail: reason },
    ],
    data: { skipped: reason },
  };
}

/**
 * Issue 38's speed: `portcullis kubernetes` (real etcd + kube-apiserver, real Envoy) against
 * `portcullis -c <file>` with the same routes, both running in the same run. All routes applied
 * (Ingresses by server-side apply, 8 at a time; the file renamed into place) -> every route served
 * (the last host and a sample not 404, then every host checked); then one route made to need a
 * user (an annotation change vs the same change in the file) -> its first 302/401, alternating
 * sides, one warm-up, medians and the median per-round ratio.
 */
export async function kubernetesSuite(context: Context): Promise<SuiteResult> {
  try {
    kubeBinary('etcd');
    kubeBinary('kube-apiserver');
  } catch (err) {
    return skipped(err instanceof Error ? err.message : String(err));
  }
  const count = context.quick ? 100 : 1000;
  const changes = context.quick ? 3 : 9;
  const cluster = await startKubeCluster();
  const sides: Side[] = [];
  const times = { kubernetes: [] as number[], file: [] as number[] };
  const ratios: number[] = [];
  const bulk = { kubernetes: { handedOver: 0, serving: 0 }, file: { handedOver: 0, serving: 0 } };
  try {
    sides.push(await kubeSide(context, cluster, count), await fileSide(context, count));
    for (const side of sides) {
      bulk[side.name] = await applyAllMs(side, count);
      context.progress(
        `${side.name}: ${count} routes handed over in ${bulk[side.name].handedOver.toFixed(0)} ms, all serving in ${bulk[side.name].serving.toFixed(0)} ms`,
      );
    }
    for (let change = 0; change <= changes; change++) {
      const index = 1 + ((change * 7919) % (count - 1));
      const order = change % 2 === 0 ? sides : [...sides].reverse();
      const ms = { kubernetes: 0, file: 0 };
      for (const side of order) ms[side.name] = await changeMs(side, index);
      context.progress(
        `change ${change === 0 ? 'warm-up' : `${change}/${changes}`}: kubernetes ${ms.kubernetes.toFixed(1)} ms, file ${ms.file.toFixed(1)} ms`,
      );
      if (change === 0) continue;
      times.kubernetes.push(ms.kubernetes);
      times.file.push(ms.file);
      ratios.push(ms.kubernetes / ms.file);
    }
  } finally {
    for (const side of sides) await side.process.stop();
    await cluster.stop();
  }
  const [kube, file, ratio] = [summarize(times.kubernetes), summarize(times.file), summarize(ratios)];
  const runs = (ms: readonly number[]): string => ms.map((v) => v.toFixed(0)).join(', ');
  return {
    name: 'kubernetes',
    how: `\`portcullis kubernetes\` on a real etcd + kube-apiserver and \`portcullis -c <file>\`, each with its real Envoy, in the same run, ${count} public routes (one host each, a Service with no endpoints: 503 proves a route, 404 none). Apply all (server-side apply 8 at a time; the file renamed into place) -> the last host and a sample not 404 (polled every 20 ms), then every host checked. Then one route made to need a user (annotation vs file line) -> first 302/401, polled every 2 ms; sides alternate, 1 warm-up, medians and the median per-round ratio.`,
    measurements: [
      {
        what: `kubernetes: ${count} Ingresses applied -> every route serving`,
        budget: 'report',
        value: round(bulk.kubernetes.serving),
        unit: 'ms',
        pass: null,
        detail: `the last of ${count} applies answered after ${round(bulk.kubernetes.handedOver)} ms; the same ${count} routes in a config file (renamed into place): ${round(bulk.file.serving)} ms (${round(bulk.kubernetes.serving / bulk.file.serving)}x)`,
      },
      {
        what: `kubernetes: annotation change on 1 of ${count} Ingresses -> serving`,
        budget: 'report',
        value: kube.median,
        unit: 'ms',
        pass: null,
        detail: `changes ${runs(kube.runs)} ms; through the file: median ${round(file.median)} ms (${runs(file.runs)})`,
      },
      {
        what: 'kubernetes: annotation change / the same change through the config file',
        budget: `<= ${RATIO_BUDGET}`,
        value: ratio.median,
        unit: 'x',
        pass: ratio.median <= RATIO_BUDGET,
        detail: `per-round ratios ${ratio.runs.join(', ')}`,
      },
    ],
    data: { count, bulkMs: bulk, changes: { kubernetes: kube, file }, ratios: ratio },
  };
}
