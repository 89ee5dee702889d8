import type * as grpc from '@grpc/grpc-js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { RESOURCE_TYPES, resourceTypeOf } from '../../proto/type-urls.js';
import type { ResourceType } from '../../proto/type-urls.js';
import type { AdsStreamEvent } from './events.js';
import type { AdsMetrics } from './metrics.js';
import type { MalformedRequest } from './messages.js';
import type { PreparedSnapshot, PreparedType } from './prepared.js';

/** What every stream needs from its server: the current snapshot, where logs and counts go. */
export interface StreamContext {
  /**
   * The node's current snapshot, prepared (one view shared by every stream); undefined before the
   * first validated config.
   */
  readonly snapshotFor: (nodeId: string) => PreparedSnapshot | undefined;
  readonly logger: Logger;
  readonly metrics: AdsMetrics;
  readonly maxMessageBytes: number;
  /** A new stream's number, unique per server (`AdsStreamEvent.stream`). */
  readonly newStreamId: () => number;
  /** Hands an event to the server's listeners (see `AdsStreamEvent`). */
  readonly emit: (event: AdsStreamEvent) => void;
}

/** The server's handle on one open stream. */
export interface AdsStream {
  /** Called after a snapshot was published; pushes what changed, in make-before-break order. */
  onSnapshot(): void;
  /** Ends the stream with status OK (Envoy reconnects with backoff). Idempotent. */
  close(): void;
}

interface RequestBase {
  readonly kind: string;
  readonly nodeId: string | undefined;
  readonly typeUrl: string;
}

/**
 * Bytes one stream writes in one turn of the event loop before its next response waits for the
 * next turn (see `StreamBase.sendQueued`): a few milliseconds of encoding.
 */
const TURN_BYTES = 256 * 1024;

/**
 * The plumbing shared by the SotW and delta streams: gRPC call events, the node id (taken from the
 * first request, the only one guaranteed to carry it: xDS protocol, "Basic Protocol Overview"),
 * the per-stream nonce counter, safe writes, and turning every failure into a log line instead of
 * an exception escaping into grpc-js. Subclasses implement the protocol in `handle` and `push`.
 */
export abstract class StreamBase<Request extends RequestBase> implements AdsStream {
  protected nodeId: string | undefined;
  protected log: Logger;
  private nonceCounter = 0;
  private finished = false;
  /** Responses waiting for a later turn, in order (see `sendQueued`). */
  private readonly outbox: (() => Uint8Array)[] = [];
  /** Bytes written on this stream in the current turn of the event loop. */
  private turnBytes = 0;
  private turnScheduled = false;
  private readonly id: number;
  /** Per type asked for: the version last reported as held, or undefined when pending was. */
  private readonly reported = new Map<ResourceType, string | undefined>();

  constructor(
    private readonly call: grpc.ServerDuplexStream<Request | MalformedRequest, Uint8Array>,
    protected readonly ctx: StreamContext,
    private readonly onDone: (stream: AdsStream) => void,
    readonly mode: 'sotw' | 'delta',
  ) {
    this.id = ctx.newStreamId();
    this.log = ctx.logger.child({ mode, peer: safePeer(call) });
    call.on('data', (message: Request | MalformedRequest) => this.receive(message));
    call.on('end', () => this.close());
    call.on('cancelled', () => this.finish('cancelled by client'));
    call.on('error', (err: unknown) => this.finish(`stream error: ${errorMessage(err)}`));
    call.on('close', () => this.finish('closed'));
  }

  /** Handles one well-formed request for a type Portcullis serves. */
  protected abstract handle(request: Request, type: ResourceType): void;

  /** True once the client asked for `type` on this stream. */
  protected abstract asked(type: ResourceType): boolean;

  /** The version of `prepared` the client holds of its type, or undefined while it does not. */
  protected abstract held(type: ResourceType, prepared: PreparedType): string | undefined;

  onSnapshot(): void {
    if (this.finished || this.nodeId === undefined) return;
    this.guard('snapshot push', () => {
      this.pushAll();
      this.report(RESOURCE_TYPES);
    });
  }

  /** Pushes every type in make-before-break order; subclasses may order removals differently. */
  protected abstract pushAll(): void;

  close(): void {
    if (this.finished) return;
    this.finish('closed by server');
    this.call.end();
  }

  /** The node's current snapshot, prepared; undefined before the first validated config. */
  protected currentSnapshot(): PreparedSnapshot | undefined {
    return this.ctx.snapshotFor(this.nodeId ?? '');
  }

  /** Next nonce of this stream: a strictly increasing decimal counter (nonces are per stream). */
  protected nextNonce(): string {
    this.nonceCounter += 1;
    return String(this.nonceCounter);
  }

  /** Tells the server's listeners that the client NACKed a response of `type` (see `AdsStreamEvent`). */
  protected reportNack(type: ResourceType, errorDetail: string): void {
    this.ctx.emit({ kind: 'nacked', stream: this.id, nodeId: this.nodeId ?? '', type, errorDetail });
  }

  /**
   * Writes the response `encode` makes (about `estimate` bytes), in order after every response
   * queued before it: at once while this turn of the event loop stays within `TURN_BYTES` on this
   * stream, else in a later turn (one response per turn, however large, `setImmediate`). The caller records the response as sent
   * when it queues it (nonce taken, state marked), so the protocol state never waits on the queue;
   * only the encoding and the write do. So a push of tens of thousands of resources does not hold
   * the main thread (ext_authz Check, sign-in) for all its responses at once, and a small push goes
   * out as before, in the same turn. False when the stream is already gone (nothing is queued).
   */
  protected sendQueued(encode: () => Uint8Array, estimate: number): boolean {
    if (this.finished) return false;
    if (this.outbox.length === 0 && this.turnBytes + estimate <= TURN_BYTES) {
      this.writeNow(encode);
      return true;
    }
    this.outbox.push(encode);
    if (!this.turnScheduled) {
      this.turnScheduled = true;
      setImmediate(() => this.nextTurn());
    }
    return true;
  }

  private writeNow(encode: () => Uint8Array): void {
    const bytes = encode();
    this.call.write(bytes);
    this.turnBytes += bytes.length;
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.nextTurn());
  }

  /** A new turn: the next queued response goes out (and another turn follows while any is left). */
  private nextTurn(): void {
    this.turnScheduled = false;
    this.turnBytes = 0;
    const next = this.outbox.shift();
    if (next === undefined || this.finished) return;
    this.guard('queued response', () => this.writeNow(next));
    // Whatever happened to that one, the rest still go, one per turn.
    if (!this.turnScheduled && this.outbox.length > 0) {
      this.turnScheduled = true;
      setImmediate(() => this.nextTurn());
    }
  }

  private receive(message: Request | MalformedRequest): void {
    if (this.finished) return;
    this.ctx.metrics.requests += 1;
    this.guard('request', () => {
      if (isMalformed(message)) {
        this.ctx.metrics.malformedRequests += 1;
        this.log.warn(
          { nodeId: this.nodeId, error: message.error, bytes: message.bytes },
          `xDS: malformed ${this.mode} request ignored: ${message.error}`,
        );
        return;
      }
      const request = message;
      if (this.nodeId === undefined && request.nodeId !== undefined) {
        this.nodeId = request.nodeId;
        this.log = this.log.child({ nodeId: this.nodeId });
      }
      if (request.typeUrl === '') {
        this.ctx.metrics.malformedRequests += 1;
        this.log.warn({}, `xDS: ${this.mode} request without type_url ignored`);
        return;
      }
      if (this.nodeId === undefined) {
        this.nodeId = '';
        this.log.debug({}, 'xDS: first request carries no node id');
      }
      const type = resourceTypeOf(request.typeUrl);
      if (type === undefined) {
        this.ctx.metrics.unknownTypeRequests += 1;
        this.log.debug(
          { typeUrl: request.typeUrl },
          'xDS: request for a type Portcullis does not serve ignored',
        );
        return;
      }
      this.handle(request, type);
      this.report([type]);
    });
  }

  /**
   * Tells the server's listeners what the client now holds of each of `types` it asked for, when
   * that differs from what was reported last (`AdsStreamEvent`). Called last, after a request or
   * a push was fully handled, so a listener that publishes a snapshot at once finds the stream in
   * a settled state.
   */
  private report(types: readonly ResourceType[]): void {
    const prepared = this.currentSnapshot();
    if (prepared === undefined || this.finished) return;
    const nodeId = this.nodeId ?? '';
    for (const type of types) {
      if (!this.asked(type)) continue;
      const version = this.held(type, prepared.type(type));
      if (this.reported.has(type) && this.reported.get(type) === version) continue;
      this.reported.set(type, version);
      this.ctx.emit(
        version === undefined
          ? { kind: 'pending', stream: this.id, nodeId, type }
          : { kind: 'acked', stream: this.id, nodeId, type, version },
      );
    }
  }

  private guard(what: string, action: () => void): void {
    try {
      action();
    } catch (err) {
      this.log.error({ err: errorMessage(err) }, `xDS: ${what} failed`);
    }
  }

  private finish(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.outbox.length = 0;
    this.log.debug({ reason }, 'xDS stream finished');
    this.onDone(this);
    this.ctx.emit({ kind: 'closed', stream: this.id, nodeId: this.nodeId ?? '' });
  }
}

function isMalformed(message: RequestBase | MalformedRequest): message is MalformedRequest {
  return message.kind === 'malformed';
}

function safePeer(call: { getPeer(): string }): string {
  try {
    return call.getPeer();
  } catch {
    return 'unknown';
  }
}
