import * as grpc from '@grpc/grpc-js';
import { shortHash } from '../../../../src/shared/hash.js';
import { recordingLogger } from '../../../../src/shared/logger.js';
import type { Logger } from '../../../../src/shared/logger.js';
import { durationMs, encodeMessage, typed } from '../../../../src/proto/codec.js';
import type { Message } from '../../../../src/proto/messages.js';
import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  RESOURCE_TYPES,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  TYPED_EXTENSION_CONFIG_TYPE,
  typeUrl,
} from '../../../../src/proto/type-urls.js';
import type { ResourceType } from '../../../../src/proto/type-urls.js';
import { AdsServer } from '../../../../src/xds/server/ads-server.js';
import type { EncodedResource, Snapshot, SnapshotSource } from '../../../../src/xds/snapshot/types.js';
import { buildSnapshot as buildProductSnapshot } from '../../../../src/xds/snapshot/build-snapshot.js';
import { connectAds } from '../../../support/ads-client.js';
import { TEST_GRPC_CREDENTIAL } from '../../../support/grpc-credential.js';
import type { AdsClient, AdsMode, AdsResponse } from '../../../support/ads-client.js';

/** Type URLs by short name, for readable tests. */
export const CDS = typeUrl(CLUSTER_TYPE);
export const EDS = typeUrl(CLUSTER_LOAD_ASSIGNMENT_TYPE);
export const LDS = typeUrl(LISTENER_TYPE);
export const RDS = typeUrl(ROUTE_CONFIGURATION_TYPE);

/** A SnapshotSource a test drives by hand; `publish` notifies listeners synchronously. */
export class TestSource implements SnapshotSource {
  private snapshot: Snapshot | undefined;
  private readonly listeners = new Set<(snapshot: Snapshot) => void>();

  current(): Snapshot | undefined {
    return this.snapshot;
  }

  subscribe(listener: (snapshot: Snapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    for (const listener of this.listeners) listener(snapshot);
  }
}

/** An EDS cluster fetched over ADS. `extra` lets a test change its content (and so its version). */
export function cluster(
  name: string,
  extra: Message<typeof CLUSTER_TYPE> = {},
): Message<typeof CLUSTER_TYPE> {
  return {
    name,
    type: 'EDS',
    connect_timeout: durationMs(1000),
    eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
    ...extra,
  };
}

/** Endpoints for `clusterName` on 127.0.0.1:`port`. */
export function endpoints(clusterName: string, port = 8080): Message<typeof CLUSTER_LOAD_ASSIGNMENT_TYPE> {
  return {
    cluster_name: clusterName,
    endpoints: [
      {
        lb_endpoints: [
          { endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } } },
        ],
      },
    ],
  };
}

/** An HTTP listener on `port` whose routes come from RDS `routeName`. */
export function listener(name: string, routeName: string, port = 8000): Message<typeof LISTENER_TYPE> {
  const hcm = typed('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager', {
    stat_prefix: name,
    rds: { route_config_name: routeName, config_source: { ads: {}, resource_api_version: 'V3' } },
    http_filters: [
      {
        name: 'envoy.filters.http.router',
        typed_config: typed('envoy.extensions.filters.http.router.v3.Router', {}),
      },
    ],
  });
  return {
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [
      { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }] },
    ],
  };
}

/** A route configuration sending every path to `clusterName`. */
export function route(name: string, clusterName: string): Message<typeof ROUTE_CONFIGURATION_TYPE> {
  return {
    name,
    virtual_hosts: [
      { name: 'all', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: clusterName } }] },
    ],
  };
}

/** Resources of a test snapshot by kind, as proto-JSON objects. */
export interface SnapshotSpec {
  readonly clusters?: readonly Message<typeof CLUSTER_TYPE>[];
  readonly endpoints?: readonly Message<typeof CLUSTER_LOAD_ASSIGNMENT_TYPE>[];
  readonly listeners?: readonly Message<typeof LISTENER_TYPE>[];
  readonly scopes?: readonly Message<typeof SCOPED_ROUTE_CONFIGURATION_TYPE>[];
  readonly filters?: readonly Message<typeof TYPED_EXTENSION_CONFIG_TYPE>[];
  readonly routes?: readonly Message<typeof ROUTE_CONFIGURATION_TYPE>[];
}

/** Encodes `spec` into a Snapshot like the real pipeline: content-hash versions per resource and per type. */
export function buildSnapshot(spec: SnapshotSpec): Snapshot {
  const byType: { readonly [T in ResourceType]: readonly Message<T>[] } = {
    [CLUSTER_TYPE]: spec.clusters ?? [],
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: spec.endpoints ?? [],
    [LISTENER_TYPE]: spec.listeners ?? [],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: spec.scopes ?? [],
    [TYPED_EXTENSION_CONFIG_TYPE]: spec.filters ?? [],
    [ROUTE_CONFIGURATION_TYPE]: spec.routes ?? [],
  };
  const resources = {} as Record<ResourceType, Map<string, EncodedResource>>;
  const typeVersions = {} as Record<ResourceType, string>;
  for (const type of RESOURCE_TYPES) {
    const map = new Map<string, EncodedResource>();
    const objects: readonly Message<ResourceType>[] = byType[type];
    for (const object of objects) {
      const named = object as { readonly name?: string; readonly cluster_name?: string };
      const name = String(type === CLUSTER_LOAD_ASSIGNMENT_TYPE ? named.cluster_name : named.name);
      const bytes = encodeMessage(type, object);
      map.set(name, { name, version: shortHash(bytes), bytes });
    }
    resources[type] = map;
    typeVersions[type] = shortHash([...map.values()].map((r) => `${r.name}=${r.version}`).join('\n'));
  }
  const version = shortHash(RESOURCE_TYPES.map((type) => typeVersions[type]).join('\n'));
  return { version, typeVersions, resources };
}

/** The usual two-cluster snapshot: clusters c1, c2 with endpoints, listener l1 using route r1. */
export function baseSpec(port = 8080): Required<SnapshotSpec> {
  return {
    clusters: [cluster('c1'), cluster('c2')],
    endpoints: [endpoints('c1', port), endpoints('c2', port + 1)],
    filters: [],
    listeners: [listener('l1', 'r1')],
    scopes: [],
    routes: [route('r1', 'c1')],
  };
}

/** A running gRPC server with the ADS service on 127.0.0.1 and an ephemeral port. */
export interface TestServer {
  readonly address: string;
  readonly ads: AdsServer;
  readonly source: TestSource;
  stop(): Promise<void>;
}

/** Starts a real grpc-js server with an `AdsServer` registered; `stop()` closes both. */
export async function startServer(logger: Logger, maxMessageBytes?: number): Promise<TestServer> {
  const source = new TestSource();
  const credential = TEST_GRPC_CREDENTIAL;
  const ads = new AdsServer(
    maxMessageBytes === undefined
      ? { source, logger, credential }
      : { source, logger, credential, maxMessageBytes },
  );
  const server = new grpc.Server();
  ads.register(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    ads,
    source,
    stop: async () => {
      ads.close();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}

/** Polls `predicate` (every 5 ms) until it holds; fails after `timeoutMs` naming `what`. */
export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Sum of a per-type counter record. */
export function total(counters: Readonly<Record<string, number>>): number {
  return Object.values(counters).reduce((sum, n) => sum + n, 0);
}

/** What a test body gets from `withServer`. */
export interface Harness {
  readonly server: TestServer;
  readonly logger: ReturnType<typeof recordingLogger>;
  /** Connects a fake Envoy; it is closed when the test ends. */
  connect(mode: AdsMode, nodeId?: string): AdsClient;
}

/** Runs `body` against a fresh server and closes every client and the server afterwards. */
export async function withServer(
  body: (harness: Harness) => Promise<void>,
  options: { maxMessageBytes?: number } = {},
): Promise<void> {
  const logger = recordingLogger();
  const server = await startServer(logger, options.maxMessageBytes);
  const clients: AdsClient[] = [];
  try {
    await body({
      server,
      logger,
      connect: (mode, nodeId = `envoy-${clients.length + 1}`) => {
        const client = connectAds(server.address, { mode, nodeId, credential: TEST_GRPC_CREDENTIAL });
        clients.push(client);
        return client;
      },
    });
  } finally {
    for (const client of clients) client.close();
    await server.stop();
  }
}

/** Reads `count` responses from `client`, in order. */
export async function take(client: AdsClient, count: number): Promise<AdsResponse[]> {
  const responses: AdsResponse[] = [];
  for (let i = 0; i < count; i += 1) responses.push(await client.next());
  return responses;
}

/** True when `client` ACKed every type of `snapshot` at the snapshot's type version (SotW). */
export function sotwConverged(
  client: AdsClient,
  snapshot: Snapshot,
  // Scopes and filter configs only count when the snapshot has some (a client whose listeners name
  // none never asks).
  types: readonly ResourceType[] = RESOURCE_TYPES.filter(
    (type) =>
      (type !== SCOPED_ROUTE_CONFIGURATION_TYPE && type !== TYPED_EXTENSION_CONFIG_TYPE) ||
      snapshot.resources[type].size > 0,
  ),
): boolean {
  return types.every((type) => client.versions.get(typeUrl(type)) === snapshot.typeVersions[type]);
}

/** True when `client` holds exactly the resources (name -> version) of `snapshot` for `types` (delta). */
export function deltaConverged(
  client: AdsClient,
  snapshot: Snapshot,
  types: readonly ResourceType[] = RESOURCE_TYPES,
): boolean {
  return types.every((type) => {
    const held = client.resources.get(typeUrl(type)) ?? new Map<string, string>();
    const want = snapshot.resources[type];
    if (held.size !== want.size) return false;
    for (const [name, resource] of want) if (held.get(name) !== resource.version) return false;
    return true;
  });
}

/**
 * A product snapshot (build-snapshot.ts) with clusters `clusters` (and their endpoints), listener
 * l1 and route configuration r1 sending everything to `target`; `extra` replaces a cluster's message.
 */
export function routedSnapshot(
  clusters: readonly string[],
  target: string,
  extra: Record<string, Message<typeof CLUSTER_TYPE>> = {},
): Snapshot {
  const names = [...clusters].sort();
  return buildProductSnapshot({
    [CLUSTER_TYPE]: names.map((name) => ({ name, message: extra[name] ?? cluster(name) })),
    [CLUSTER_LOAD_ASSIGNMENT_TYPE]: names.map((name) => ({ name, message: endpoints(name) })),
    [LISTENER_TYPE]: [{ name: 'l1', message: listener('l1', 'r1') }],
    [SCOPED_ROUTE_CONFIGURATION_TYPE]: [],
    [TYPED_EXTENSION_CONFIG_TYPE]: [],
    [ROUTE_CONFIGURATION_TYPE]: [{ name: 'r1', message: route('r1', target) }],
  }).snapshot;
}
