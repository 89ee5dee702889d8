// Measures what each build subscriber costs the main thread at 10,000 routes (issue 36): the
// first build, a one-route change and a change to every route, each as the reload loop hands it
// over (built, then sent through the real delta and put together from the previous build, so
// unchanged IR items and resources are the previous build's very objects). Not a test: run
//   node --import tsx test/support/publish-cost.ts [routes] [--rounds N] [--no-ads]
// (add `--cpu-prof` before `--import` for a profile). Prints the ms of each subscriber's publish.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { routeHost, bulkTargets } from '../../bench/lib/config-gen.js';
import { build, type GoodBuild } from '../../src/runtime/build-pipeline.js';
import { diffBuild, type SentBase } from '../../src/runtime/build-delta.js';
import { applyChunk, assemble, startStaging, type ReceivedBuild } from '../../src/runtime/apply-delta.js';
import type { PublishedBuild } from '../../src/runtime/subscribers.js';
import type { IRCluster, IRVirtualHost } from '../../src/ir/types.js';
import { AuthorizeService } from '../../src/authorize/service.js';
import { AuthenticateService } from '../../src/authenticate/service.js';
import { RecordReplayGuard } from '../../src/authenticate/flow/replay-guard.js';
import { MemoryBackend } from '../../src/databroker/memory-backend.js';
import { SnapshotStore } from '../../src/xds/snapshot/snapshot-store.js';
import { startXds } from '../../src/xds/start.js';
import { silentLogger } from '../../src/shared/logger.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  typeUrl,
} from '../../src/proto/type-urls.js';
import { memorySessionStore } from './session-store.js';
import { SIGN_IN_YAML } from './sign-in-config.js';
import { connectAds, type AdsClient } from './ads-client.js';
import { TEST_GRPC_CREDENTIAL } from './grpc-credential.js';

const args = process.argv.slice(2);
const ROUTES = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 10_000);
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : 3;
const ADS = !args.includes('--no-ads');

/** Route `i`: public, or protected by one of a few policies (every third route). */
function routeYaml(i: number, generation: number, moved: number): string {
  const [a, b] = bulkTargets(i);
  const port = i === moved ? 10 : 9;
  const policy =
    i === moved
      ? `    allowed_users: [moved${generation}@example.com]`
      : i % 3 !== 0
        ? '    allow_public_unauthenticated_access: true'
        : i % 2 === 0
          ? `    allowed_users: [u${i % 97}@example.com]`
          : `    allowed_domains: [d${i % 13}.example.com]`;
  return [
    `  - from: https://${routeHost(i)}`,
    `    to:`,
    `      - http://${a.replace(':9', `:${port}`)},3`,
    `      - http://${b},1`,
    `    outlier_detection:`,
    `      consecutive_5xx: ${5 + generation}`,
    `      interval: 10s`,
    `    pass_identity_headers: true`,
    `    timeout: ${30 + generation}s`,
    policy,
    '',
  ].join('\n');
}

function configText(generation: number, moved: number): string {
  const routes = Array.from({ length: ROUTES }, (_, i) => routeYaml(i, generation, moved));
  return `insecure_server: true\naddress: 127.0.0.1:8080\n${SIGN_IN_YAML}routes:\n${routes.join('')}`;
}

const dir = mkdtempSync(join(tmpdir(), 'publish-cost-'));
const path = join(dir, 'config.yaml');
const secrets = { sharedSecret: randomBytes(32), cookieSecret: randomBytes(32) };

function buildOf(text: string, previous: GoodBuild | undefined): GoodBuild {
  writeFileSync(path, text);
  const built = build(
    {
      configPath: path,
      env: {},
      translate: { systemCaFile: '/etc/ssl/certs/ca-certificates.crt', generatedSecrets: secrets },
    },
    previous,
  );
  if (!built.ok) throw new Error(JSON.stringify(built.problems.slice(0, 3)));
  return built;
}

/**
 * `next` with every IR virtual host and cluster whose content equals the previous build's replaced
 * by the previous object: what the pipeline hands back for unchanged items (helper "incr").
 */
function withIdentity(next: GoodBuild, previous: GoodBuild | undefined): GoodBuild {
  if (previous === undefined) return next;
  const keep = <T extends { readonly name: string }>(was: readonly T[], now: readonly T[]): T[] => {
    const byName = new Map(was.map((item) => [item.name, item]));
    return now.map((item) => {
      const old = byName.get(item.name);
      return old !== undefined && old !== item && JSON.stringify(old) === JSON.stringify(item) ? old : item;
    });
  };
  const virtualHosts = keep<IRVirtualHost>(previous.ir.virtualHosts, next.ir.virtualHosts);
  const clusters = keep<IRCluster>(previous.ir.clusters, next.ir.clusters);
  return { ...next, ir: { ...next.ir, virtualHosts, clusters } };
}

/** The main thread's side of a delta: `next` as the reload loop publishes it. */
function crossed(
  state: { sent: SentBase | undefined; received: ReceivedBuild | undefined },
  next: GoodBuild,
): PublishedBuild {
  const { memo: _memo, ...published } = next;
  const delta = diffBuild(state.sent, published, []);
  const chunks = delta.chunks.map((chunk) =>
    structuredClone(chunk, chunk.bytes === undefined ? undefined : { transfer: [chunk.bytes] }),
  );
  const staging = startStaging(chunks[0] as (typeof chunks)[number]);
  for (const chunk of chunks) applyChunk(staging, chunk);
  const count = (key: 'virtualHosts' | 'clusters'): number =>
    staging[key].changed.size + staging[key].added.length + staging[key].removed.size;
  crossedItems = `${count('virtualHosts')} hosts, ${count('clusters')} clusters crossed`;
  state.received = assemble(state.received, staging);
  state.sent = delta.next;
  return state.received.build;
}

let crossedItems = '';
let clientsOf: readonly AdsClient[] = [];

/** ACKs what the fake Envoys receive until `done()`, for at most 3 s. */
async function ackUntil(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!done()) {
    if (Date.now() > deadline) return;
    for (const client of clientsOf) while (client.pending().length > 0) client.ack(await client.next());
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  for (const client of clientsOf) while (client.pending().length > 0) client.ack(await client.next());
}

async function main(): Promise<void> {
  const sessions = memorySessionStore();
  const authorize = new AuthorizeService(sessions, silentLogger);
  const authenticate = new AuthenticateService(sessions, silentLogger, {
    replay: new RecordReplayGuard(new MemoryBackend(), Date.now),
  });
  const store = new SnapshotStore();
  const storeTimes: number[] = [];
  const storePublish = store.publish.bind(store);
  store.publish = (snapshot) => {
    const started = performance.now();
    const changed = storePublish(snapshot);
    storeTimes.push(performance.now() - started);
    return changed;
  };
  const server = new grpc.Server();
  let settled = 0;
  const xdsSubscribers: ((build: PublishedBuild) => void)[] = [];
  const xds = startXds({
    store,
    logger: silentLogger,
    grpcServer: server,
    envoyCredential: TEST_GRPC_CREDENTIAL,
    onSettled: () => {
      settled += 1;
      authorize.releaseRetiredRoutes();
    },
    subscribe: (_name, publish) => xdsSubscribers.push((b) => publish(b.snapshot)),
  });
  const subscribers: [string, (build: PublishedBuild) => void][] = [
    ['authorize', (b) => authorize.install(b.ir, b.keys, b.changes)],
    ['authenticate', (b) => authenticate.install(b.ir, b.keys, b.changes)],
    ['xds', (b) => xdsSubscribers.forEach((publish) => publish(b))],
  ];
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  const clients: AdsClient[] = [];
  clientsOf = clients;

  const state = { sent: undefined as SentBase | undefined, received: undefined as ReceivedBuild | undefined };
  const rows: string[] = [];
  let built: GoodBuild | undefined;
  const publish = async (label: string, text: string): Promise<void> => {
    const raw = buildOf(text, built);
    const next = withIdentity(raw, built);
    built = next;
    const published = crossed(state, next);
    const times: string[] = [];
    const settledBefore = settled;
    for (const [name, take] of subscribers) {
      const started = performance.now();
      take(published);
      times.push(`${name} ${(performance.now() - started).toFixed(1)}`);
    }
    // Make-before-break's later steps run on ADS events (the fake Envoys ACK in the background).
    const later = storeTimes.splice(0);
    await ackUntil(() => settled > settledBefore);
    const steps = storeTimes.splice(0).map((ms) => ms.toFixed(1));
    rows.push(
      `${label.padEnd(12)} [${crossedItems}; ${clients.map((c) => c.received.length).join('/')} responses] ${times.join('  ')}  (store.publish within xds: ${later.map((ms) => ms.toFixed(1)).join(', ')}; later steps: ${steps.join(', ') || 'none'})`,
    );
  };

  await publish('first', configText(0, -1));
  if (ADS) {
    for (const mode of ['delta', 'sotw'] as const) {
      const client = connectAds(`127.0.0.1:${port}`, {
        mode,
        nodeId: `envoy-${mode}`,
        credential: TEST_GRPC_CREDENTIAL,
        timeoutMs: 30_000,
      });
      clients.push(client);
      const snapshot = store.current() as NonNullable<ReturnType<SnapshotStore['current']>>;
      client.subscribe(typeUrl(CLUSTER_TYPE));
      client.subscribe(typeUrl(LISTENER_TYPE));
      client.subscribe(typeUrl(SCOPED_ROUTE_CONFIGURATION_TYPE));
      client.subscribe(typeUrl(CLUSTER_LOAD_ASSIGNMENT_TYPE), [
        ...snapshot.resources[CLUSTER_LOAD_ASSIGNMENT_TYPE].keys(),
      ]);
      client.subscribe(typeUrl(ROUTE_CONFIGURATION_TYPE), [
        ...snapshot.resources[ROUTE_CONFIGURATION_TYPE].keys(),
      ]);
      await client.ackAll(() => client.received.length >= 5, 30_000);
      await ackUntil(() => client.pending().length === 0);
    }
  }
  for (let round = 1; round <= ROUNDS; round++) {
    await publish(`one route`, configText(round - 1, round));
    await publish(`every route`, configText(round, round));
  }
  console.log(`${ROUTES} routes, ${ADS ? clients.length : 0} ADS clients (delta, SotW); ms per subscriber:`);
  for (const row of rows) console.log(row);
  console.log(`xds settled ${settled} times`);
  for (const client of clients) client.close();
  xds.ads.close();
  server.forceShutdown();
  await authenticate.close();
}

await main();
