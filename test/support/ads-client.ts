import * as grpc from '@grpc/grpc-js';
import { messageType } from '../../src/proto/proto-root.js';
import { CLUSTER_LOAD_ASSIGNMENT_TYPE, TYPE_PREFIX } from '../../src/proto/type-urls.js';
import { ADS_SERVICE } from '../../src/xds/server/grpc-service.js';
import { credentialMetadata } from './grpc-credential.js';
import type { DeltaRequestInit, SotwRequestInit } from '../../src/xds/server/messages.js';

/**
 * A fake Envoy for tests: an ADS client over a real loopback gRPC connection, built from the same
 * service definition the server registers. It sends what Envoy would (first request with the node,
 * later requests echoing nonces), queues every response, and tracks what it "holds" after ACKs so
 * convergence tests can compare clients. Every wait is bounded; a timeout rejects with what was
 * awaited. Close clients in `after`/`finally` (`close()`), or the test process will not exit.
 */
export type AdsMode = 'sotw' | 'delta';

/** Options of `connectAds`. */
export interface ConnectOptions {
  readonly mode: AdsMode;
  readonly nodeId: string;
  /**
   * The gRPC credential to present in the stream's metadata, as Envoy does (see
   * `TEST_GRPC_CREDENTIAL`); unset sends none, and Portcullis refuses the stream.
   */
  readonly credential?: string;
  /** Default bound for `next`/`ackAll`, in milliseconds (5000). */
  readonly timeoutMs?: number;
}

/** One resource of a received response. `version` is set in delta mode. */
export interface ReceivedResource {
  readonly name: string;
  readonly version: string | undefined;
  readonly value: Uint8Array;
}

/** A received response in either mode; `version` is SotW `version_info` or delta `system_version_info`. */
export interface AdsResponse {
  readonly mode: AdsMode;
  readonly typeUrl: string;
  readonly version: string;
  readonly nonce: string;
  readonly resources: readonly ReceivedResource[];
  /** Delta `removed_resources`; always empty in SotW. */
  readonly removed: readonly string[];
  /** Encoded size of the whole response message. */
  readonly bytes: number;
}

/** Name of an encoded Listener, RouteConfiguration, Cluster or ClusterLoadAssignment. */
export function resourceName(typeUrl: string, value: Uint8Array): string {
  const typeName = typeUrl.slice(TYPE_PREFIX.length);
  const decoded = messageType(typeName).decode(value) as unknown as { name?: string; cluster_name?: string };
  return (typeName === CLUSTER_LOAD_ASSIGNMENT_TYPE ? decoded.cluster_name : decoded.name) ?? '';
}

interface Waiter {
  resolve(response: AdsResponse): void;
  reject(error: Error): void;
}

/** The fake Envoy. Mode-specific methods throw when used in the other mode. */
export class AdsClient {
  /** Every response received, in order (read or not). */
  readonly received: AdsResponse[] = [];
  /** Versions the client ACKed last, by type URL. */
  readonly versions = new Map<string, string>();
  /** What the client holds after ACKs: type URL -> resource name -> version (SotW: the type version). */
  readonly resources = new Map<string, Map<string, string>>();
  private readonly queue: AdsResponse[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly sotwNames = new Map<string, readonly string[]>();
  /** SotW: the nonce of the last response ACKed or NACKed, per type URL. */
  private readonly sotwNonces = new Map<string, string>();
  private sentFirst = false;
  private endError: Error | undefined;

  constructor(
    private readonly call: grpc.ClientDuplexStream<SotwRequestInit | DeltaRequestInit, AdsResponse>,
    private readonly grpcClient: grpc.Client,
    readonly mode: AdsMode,
    readonly nodeId: string,
    readonly timeoutMs: number,
  ) {
    call.on('data', (response: AdsResponse) => this.deliver(response));
    call.on('error', (err: Error) => this.fail(err));
    call.on('end', () => this.fail(new Error('ADS stream ended by the server')));
  }

  /**
   * SotW: sends a DiscoveryRequest. The node is attached to the stream's first request only. Like
   * Envoy, a request that does not set them carries the nonce of the last response of its type that
   * was ACKed or NACKed, and the version last ACKed, so a changed subscription is not stale.
   */
  request(init: Omit<SotwRequestInit, 'node'>): void {
    this.requireMode('sotw');
    if (init.resource_names !== undefined) this.sotwNames.set(init.type_url, init.resource_names);
    this.write({
      response_nonce: this.sotwNonces.get(init.type_url) ?? '',
      version_info: this.versions.get(init.type_url) ?? '',
      ...init,
      ...this.firstNode(),
    });
  }

  /** Delta: sends a DeltaDiscoveryRequest. The node is attached to the stream's first request only. */
  deltaRequest(init: Omit<DeltaRequestInit, 'node'>): void {
    this.requireMode('delta');
    this.write({ ...init, ...this.firstNode() });
  }

  /** Subscribes like Envoy's first request of a type (no names: wildcard for LDS/CDS). */
  subscribe(typeUrl: string, names: readonly string[] = []): void {
    if (this.mode === 'sotw') this.request({ type_url: typeUrl, resource_names: names });
    else this.deltaRequest({ type_url: typeUrl, resource_names_subscribe: names });
  }

  /** ACKs `response` and updates what the client holds. */
  ack(response: AdsResponse): void {
    this.apply(response);
    if (this.mode === 'delta') {
      this.deltaRequest({ type_url: response.typeUrl, response_nonce: response.nonce });
      return;
    }
    this.versions.set(response.typeUrl, response.version);
    this.sotwNonces.set(response.typeUrl, response.nonce);
    this.request({
      type_url: response.typeUrl,
      version_info: response.version,
      response_nonce: response.nonce,
      resource_names: this.sotwNames.get(response.typeUrl) ?? [],
    });
  }

  /** NACKs `response` with `message` as `error_detail`; what the client holds is unchanged. */
  nack(response: AdsResponse, message: string): void {
    const error_detail = { code: grpc.status.INVALID_ARGUMENT, message };
    if (this.mode === 'delta') {
      this.deltaRequest({ type_url: response.typeUrl, response_nonce: response.nonce, error_detail });
      return;
    }
    this.sotwNonces.set(response.typeUrl, response.nonce);
    this.request({
      type_url: response.typeUrl,
      version_info: this.versions.get(response.typeUrl) ?? '',
      response_nonce: response.nonce,
      resource_names: this.sotwNames.get(response.typeUrl) ?? [],
      error_detail,
    });
  }

  /** The next unread response; rejects after `timeoutMs` or when the stream ends. */
  next(timeoutMs = this.timeoutMs): Promise<AdsResponse> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.endError !== undefined) return Promise.reject(this.endError);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (response) => {
          clearTimeout(timer);
          resolve(response);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${this.nodeId}: no ADS response within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Unread responses right now, without waiting. */
  pending(): readonly AdsResponse[] {
    return [...this.queue];
  }

  /**
   * ACKs every response as it arrives until `until()` holds (checked before each wait), within
   * `timeoutMs` overall; returns the responses it ACKed. Convergence tests pass a predicate on
   * `versions`/`resources`.
   */
  async ackAll(until: () => boolean, timeoutMs = this.timeoutMs): Promise<AdsResponse[]> {
    const deadline = Date.now() + timeoutMs;
    const acked: AdsResponse[] = [];
    while (!until()) {
      const response = await this.next(Math.max(1, deadline - Date.now()));
      this.ack(response);
      acked.push(response);
    }
    return acked;
  }

  /** Cancels the stream and closes the channel. */
  close(): void {
    this.call.cancel();
    this.grpcClient.close();
  }

  private apply(response: AdsResponse): void {
    const held = this.resources.get(response.typeUrl) ?? new Map<string, string>();
    const fullSet = response.mode === 'sotw' && isFullSetUrl(response.typeUrl);
    if (fullSet) held.clear();
    for (const resource of response.resources) held.set(resource.name, resource.version ?? response.version);
    for (const name of response.removed) held.delete(name);
    this.resources.set(response.typeUrl, held);
  }

  private deliver(response: AdsResponse): void {
    this.received.push(response);
    const waiter = this.waiters.shift();
    if (waiter !== undefined) waiter.resolve(response);
    else this.queue.push(response);
  }

  private fail(error: Error): void {
    this.endError ??= error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private firstNode(): { node?: { id: string } } {
    if (this.sentFirst) return {};
    this.sentFirst = true;
    return { node: { id: this.nodeId } };
  }

  private write(init: SotwRequestInit | DeltaRequestInit): void {
    this.call.write(init);
  }

  private requireMode(mode: AdsMode): void {
    if (this.mode !== mode) throw new Error(`this AdsClient speaks ${this.mode}, not ${mode}`);
  }
}

function isFullSetUrl(typeUrl: string): boolean {
  return (
    typeUrl.endsWith('.Listener') ||
    typeUrl.endsWith('.Cluster') ||
    typeUrl.endsWith('.ScopedRouteConfiguration')
  );
}

/**
 * Connects a fake Envoy to `address` (`host:port`) with an open ADS stream of the given mode,
 * presenting `options.credential` when set. A refused stream shows as `next()` rejecting with the
 * gRPC status (e.g. UNAUTHENTICATED).
 */
export function connectAds(address: string, options: ConnectOptions): AdsClient {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': -1,
  });
  const method =
    options.mode === 'sotw' ? ADS_SERVICE.StreamAggregatedResources : ADS_SERVICE.DeltaAggregatedResources;
  const deserialize = (bytes: Buffer): AdsResponse =>
    options.mode === 'sotw' ? fromSotw(bytes) : fromDelta(bytes);
  const call = client.makeBidiStreamRequest<SotwRequestInit | DeltaRequestInit, AdsResponse>(
    method.path,
    method.requestSerialize as (value: SotwRequestInit | DeltaRequestInit) => Buffer,
    deserialize,
    options.credential === undefined ? new grpc.Metadata() : credentialMetadata(options.credential),
  );
  return new AdsClient(call, client, options.mode, options.nodeId, options.timeoutMs ?? 5000);
}

function fromSotw(bytes: Buffer): AdsResponse {
  const decoded = ADS_SERVICE.StreamAggregatedResources.responseDeserialize(bytes);
  return {
    mode: 'sotw',
    typeUrl: decoded.type_url,
    version: decoded.version_info,
    nonce: decoded.nonce,
    resources: decoded.resources.map((any) => ({
      name: resourceName(any.type_url, any.value),
      version: undefined,
      value: any.value,
    })),
    removed: [],
    bytes: bytes.length,
  };
}

function fromDelta(bytes: Buffer): AdsResponse {
  const decoded = ADS_SERVICE.DeltaAggregatedResources.responseDeserialize(bytes);
  return {
    mode: 'delta',
    typeUrl: decoded.type_url,
    version: decoded.system_version_info,
    nonce: decoded.nonce,
    resources: decoded.resources.map((r) => ({ name: r.name, version: r.version, value: r.resource.value })),
    removed: decoded.removed_resources,
    bytes: bytes.length,
  };
}
