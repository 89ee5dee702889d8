import * as grpc from '@grpc/grpc-js';
import { GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialChecker } from '../../contract/grpc-credential.js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { Snapshot, SnapshotSource } from '../snapshot/types.js';
import { DeltaStream } from './delta-stream.js';
import type { AdsEventListener, AdsStreamEvent } from './events.js';
import { ADS_GRPC_DEFINITION } from './grpc-service.js';
import type { DeltaCall, SotwCall } from './grpc-service.js';
import { AdsMetrics } from './metrics.js';
import type { AdsStats } from './metrics.js';
import { prepare, type PreparedSnapshot } from './prepared.js';
import { SotwStream } from './sotw-stream.js';
import type { AdsStream, StreamContext } from './stream-base.js';

/** Options of `AdsServer`. */
export interface AdsServerOptions {
  /** Where validated snapshots come from; nothing is served before `current()` returns one. */
  readonly source: SnapshotSource;
  readonly logger: Logger;
  /**
   * The token Envoy must present in its stream metadata (`contract/grpc-credential.ts`); a stream
   * without it is refused with UNAUTHENTICATED before anything is read or sent. Never logged.
   */
  readonly credential: string;
  /** Largest delta response to send; bigger change sets are split. Default 4 MiB (gRPC's usual limit). */
  readonly maxMessageBytes?: number;
}

/** Default `maxMessageBytes`: 4 MiB, the default receive limit of most gRPC implementations. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The ADS control-plane endpoint: Envoy's `AggregatedDiscoveryService` with both transports, SotW
 * (`StreamAggregatedResources`) and incremental (`DeltaAggregatedResources`), fed by a
 * `SnapshotSource` (xDS protocol: https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol).
 *
 * The server does not own a gRPC server: `register` adds the service to one the caller created,
 * so ext_authz and others can share the port. Every published snapshot is fanned out to all open
 * streams; each stream diffs it against what its Envoy has and pushes in make-before-break order.
 * `close()` ends every stream with status OK (Envoy keeps its config and reconnects with backoff)
 * and refuses new streams with UNAVAILABLE. A stream whose metadata lacks the gRPC credential is
 * refused with UNAUTHENTICATED at its start, before its first request is read: the resources hold
 * TLS private keys and must reach only Envoy.
 */
export class AdsServer {
  private readonly metrics = new AdsMetrics();
  private readonly streams = new Set<AdsStream>();
  private readonly ctx: StreamContext;
  private readonly unsubscribe: () => void;
  private readonly source: SnapshotSource;
  private readonly hasCredential: (values: readonly unknown[]) => boolean;
  /** The prepared view of the snapshot last read from the source, shared by every stream. */
  private prepared: PreparedSnapshot | undefined;
  private closed = false;
  private streamCounter = 0;
  private readonly eventListeners = new Set<AdsEventListener>();

  constructor(options: AdsServerOptions) {
    const maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1024) {
      throw new RangeError(`maxMessageBytes must be an integer >= 1024, got ${String(maxMessageBytes)}`);
    }
    const logger = options.logger.child({ component: 'ads' });
    this.source = options.source;
    this.hasCredential = grpcCredentialChecker(options.credential);
    this.ctx = {
      snapshotFor: (nodeId) => this.snapshotFor(nodeId),
      logger,
      metrics: this.metrics,
      maxMessageBytes,
      newStreamId: () => ++this.streamCounter,
      emit: (event) => this.emit(event),
    };
    this.unsubscribe = options.source.subscribe(() => this.fanOut());
  }

  /** Adds the ADS service to `server`. Call once per server, before it starts serving. */
  register(server: grpc.Server): void {
    server.addService(ADS_GRPC_DEFINITION, {
      StreamAggregatedResources: (call: SotwCall) => this.open(call, 'sotw'),
      DeltaAggregatedResources: (call: DeltaCall) => this.open(call, 'delta'),
    });
  }

  /**
   * Calls `listener` with every stream's events (see `AdsStreamEvent`: per stream and type, the
   * version its Envoy ACKed and holds, or that it holds none yet; a stream's end), synchronously,
   * right after the request or push that caused them. Returns an unsubscribe. A listener that
   * throws is logged; the stream goes on.
   */
  onEvent(listener: AdsEventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Counters for tests and logs; a detached copy. */
  stats(): AdsStats {
    return this.metrics.snapshot();
  }

  /** Ends every open stream cleanly and stops listening for snapshots. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    for (const stream of [...this.streams]) stream.close();
  }

  /**
   * The node's current snapshot, prepared once per snapshot: every stream reads the same view, so
   * a full-set SotW body is encoded once per snapshot and type, whatever the number of Envoys.
   */
  private snapshotFor(nodeId: string): PreparedSnapshot | undefined {
    const snapshot: Snapshot | undefined = this.source.current(nodeId);
    if (snapshot === undefined) return undefined;
    if (this.prepared?.snapshot !== snapshot) this.prepared = prepare(snapshot, this.prepared);
    return this.prepared;
  }

  private open(call: SotwCall | DeltaCall, mode: 'sotw' | 'delta'): void {
    if (this.closed) {
      call.emit('error', {
        code: grpc.status.UNAVAILABLE,
        details: 'Portcullis ADS server is shutting down',
      });
      return;
    }
    if (!this.hasCredential(call.metadata.get(GRPC_CREDENTIAL_METADATA_KEY))) {
      this.metrics.unauthenticatedStreams += 1;
      this.ctx.logger.warn(
        { mode, peer: peerOf(call) },
        'xDS: stream refused (UNAUTHENTICATED): no valid Portcullis gRPC credential in its metadata',
      );
      call.emit('error', {
        code: grpc.status.UNAUTHENTICATED,
        details: 'a valid Portcullis gRPC credential is required',
      });
      return;
    }
    const onDone = (stream: AdsStream): void => {
      if (this.streams.delete(stream)) this.metrics.streamsOpen -= 1;
    };
    const stream =
      mode === 'sotw'
        ? new SotwStream(call as SotwCall, this.ctx, onDone)
        : new DeltaStream(call as DeltaCall, this.ctx, onDone);
    this.streams.add(stream);
    this.metrics.streamsOpen += 1;
    this.metrics.streamsTotal += 1;
  }

  private emit(event: AdsStreamEvent): void {
    for (const listener of [...this.eventListeners]) {
      try {
        listener(event);
      } catch (err) {
        this.ctx.logger.error({ err: errorMessage(err), event: event.kind }, 'xDS: an event listener failed');
      }
    }
  }

  private fanOut(): void {
    for (const stream of [...this.streams]) {
      try {
        stream.onSnapshot();
      } catch (err) {
        this.ctx.logger.error({ err: errorMessage(err) }, 'xDS: snapshot push failed on a stream');
      }
    }
  }
}

function peerOf(call: { getPeer(): string }): string {
  try {
    return call.getPeer();
  } catch {
    return 'unknown';
  }
}
