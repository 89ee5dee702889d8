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
  /** How writes wait for the client's answers; `DEFAULT_PACING` when unset (tests shorten it). */
  readonly pacing?: StreamPacing;
}

/**
 * How many written responses a stream leaves unanswered before the next one waits for an answer
 * (see `StreamBase.sendQueued`).
 */
export interface StreamPacing {
  /** Written responses not yet answered, at most (at least one is always allowed). */
  readonly maxUnanswered: number;
  /** Their bytes, at most, counting the next one (at least one response is always allowed). */
  readonly maxUnansweredBytes: number;
  /** Milliseconds without an answer after which the next response is written anyway. */
  readonly valveMs: number;
}

/**
 * Pacing in production. Bytes are what costs Envoy time (seconds per 4 MiB CDS chunk at 50,000
 * routes), so the bound is one full chunk (4 MiB, the default `maxMessageBytes`) unanswered at a
 * time: Envoy never has more than about one chunk's work queued ahead of the server's keepalive
 * PING, which it must answer within 10 s or the connection is dropped (grpc/grpc-limits.ts). A
 * small push (CDS, EDS, LDS, RDS of a few KiB) stays within both bounds and goes out at once, as
 * before. 5 s without an answer writes the next anyway.
 */
export const DEFAULT_PACING: StreamPacing = {
  maxUnanswered: 16,
  maxUnansweredBytes: 4 * 1024 * 1024,
  valveMs: 5_000,
};

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
  readonly responseNonce: string;
}

/** A response queued on a stream (see `StreamBase.sendQueued`). */
interface Queued {
  readonly nonce: number;
  readonly encode: () => Uint8Array;
  readonly estimate: number;
}

/** A response written and not yet answered. */
interface Written {
  readonly nonce: number;
  readonly bytes: number;
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
  /** Responses queued and not yet written, in order (see `sendQueued`). */
  private readonly outbox: Queued[] = [];
  /** Responses written and not yet answered, in nonce order (see `answered`). */
  private readonly unanswered: Written[] = [];
  private unansweredBytes = 0;
  /** Armed while the outbox waits for an answer (see `StreamPacing.valveMs`). */
  private valve: NodeJS.Timeout | undefined;
  /** Set when the valve fired: the next response goes whatever is unanswered. */
  private valveOpen = false;
  private readonly pacing: StreamPacing;
  /** Bytes written on this stream in the current turn of the event loop. */
  private turnBytes = 0;
  /** True in a turn started by `nextTurn` until its first write: that one goes whatever its size. */
  private turnFresh = false;
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
    this.pacing = ctx.pacing ?? DEFAULT_PACING;
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
   * Writes the response `encode` makes (about `estimate` bytes, nonce `nonce`), in order after
   * every response queued before it. The caller records the response as sent when it queues it
   * (nonce taken, state marked), so the protocol state never waits on the queue; only the encoding
   * and the write do. A response is written when both allow it:
   * - the event loop: at once while this turn stays within `TURN_BYTES` on this stream, else in a
   *   later turn (`setImmediate`; a new turn writes its first response whatever its size), so a
   *   push of tens of thousands of resources does not hold the main thread (ext_authz Check,
   *   sign-in) for all its responses at once;
   * - the client's answers (`StreamPacing`): Envoy ACKs or NACKs every response by its nonce, in
   *   the order it applies them [1], so while `maxUnanswered` responses (or `maxUnansweredBytes`)
   *   are written and unanswered the next waits for an answer, or `valveMs` without any. An Envoy
   *   that takes seconds per CDS chunk thus never has a queue of chunks ahead of the keepalive
   *   PING in its socket, which it would answer too late (the server drops the connection).
   * A small push (one or two responses) goes out as before, in the same turn. False when the
   * stream is already gone (nothing is queued).
   *
   * [1] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#ack-nack-and-resource-type-instance-version
   */
  protected sendQueued(nonce: string, encode: () => Uint8Array, estimate: number): boolean {
    if (this.finished) return false;
    this.outbox.push({ nonce: Number(nonce), encode, estimate });
    this.pump();
    return true;
  }

  /** Writes queued responses while the turn and the unanswered window allow, in order. */
  private pump(): void {
    while (!this.finished) {
      const next = this.outbox[0];
      if (next === undefined) break;
      if (!this.valveOpen && !this.windowOpen(next.estimate)) {
        this.armValve();
        return;
      }
      if (!this.turnFresh && this.turnBytes + next.estimate > TURN_BYTES) {
        this.scheduleTurn();
        return;
      }
      this.outbox.shift();
      this.turnFresh = false;
      this.valveOpen = false;
      // Whatever happens to this one, the rest still go, in order.
      this.guard('queued response', () => this.write(next));
    }
    this.disarmValve();
  }

  private write(queued: Queued): void {
    const bytes = queued.encode();
    this.call.write(bytes);
    this.turnBytes += bytes.length;
    this.unanswered.push({ nonce: queued.nonce, bytes: bytes.length });
    this.unansweredBytes += bytes.length;
    this.scheduleTurn();
  }

  private windowOpen(estimate: number): boolean {
    if (this.unanswered.length === 0) return true;
    return (
      this.unanswered.length < this.pacing.maxUnanswered &&
      this.unansweredBytes + estimate <= this.pacing.maxUnansweredBytes
    );
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(() => this.nextTurn());
  }

  /** A new turn: its byte count starts over and the queue goes on. */
  private nextTurn(): void {
    this.turnScheduled = false;
    this.turnBytes = 0;
    this.turnFresh = true;
    this.pump();
    this.turnFresh = false;
  }

  /**
   * The client answered the response with nonce `responseNonce` (an ACK, a NACK or a later
   * request of its type echoing it): that one and every response written before it are answered,
   * since Envoy applies a stream's responses in order. Other nonces (empty, not ours) answer
   * nothing. Stale nonces count too: a stale ACK still says the response was applied.
   */
  private answered(responseNonce: string): void {
    if (responseNonce === '') return;
    const nonce = Number(responseNonce);
    if (!Number.isSafeInteger(nonce)) return;
    let count = 0;
    for (const written of this.unanswered) {
      if (written.nonce > nonce) break;
      this.unansweredBytes -= written.bytes;
      count += 1;
    }
    if (count === 0) return;
    this.unanswered.splice(0, count);
    this.disarmValve();
    this.pump();
  }

  private armValve(): void {
    if (this.valve !== undefined) return;
    this.valve = setTimeout(() => {
      this.valve = undefined;
      if (this.finished) return;
      this.log.debug(
        { unanswered: this.unanswered.length, queued: this.outbox.length, ms: this.pacing.valveMs },
        'xDS: no answer in time; next response written anyway',
      );
      this.valveOpen = true;
      this.pump();
    }, this.pacing.valveMs);
    this.valve.unref();
  }

  private disarmValve(): void {
    if (this.valve === undefined) return;
    clearTimeout(this.valve);
    this.valve = undefined;
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
      this.answered(request.responseNonce);
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
    this.unanswered.length = 0;
    this.unansweredBytes = 0;
    this.disarmValve();
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
