import type { Socket } from 'node:net';
import { errorMessage } from '../../../shared/errors.js';
import {
  answerCheck,
  CHECK_METHOD_PATH,
  CheckFailure,
  GRPC_PREFIX_BYTES,
  GRPC_RESOURCE_EXHAUSTED,
  GRPC_UNIMPLEMENTED,
  MAX_CHECK_MESSAGE_BYTES,
  type CheckOutcome,
} from '../check-call.js';
import { CheckStream } from './check-stream.js';
import {
  COMPRESSION_ERROR,
  DEFAULT_WINDOW_SIZE,
  ENHANCE_YOUR_CALM,
  FLAG_END_HEADERS,
  FLAG_END_STREAM,
  FLOW_CONTROL_ERROR,
  FRAME_CONTINUATION,
  FRAME_DATA,
  FRAME_HEADERS,
  FRAME_SETTINGS,
  goawayFrame,
  H2ConnectionError,
  INTERNAL_ERROR,
  NO_ERROR,
  PROTOCOL_ERROR,
  REFUSED_STREAM,
  rstStreamFrame,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_CONCURRENT_STREAMS,
  SETTINGS_MAX_HEADER_LIST_SIZE,
  settingsFrame,
  STREAM_CLOSED,
  windowUpdateFrame,
} from './frame.js';
import { FrameSplitter } from './frame-splitter.js';
import { ControlFrames } from './control-frames.js';
import {
  DEFAULT_H2C_LIMITS,
  STREAM_WINDOW_BYTES,
  type H2cConnectionOptions,
  type H2cLimits,
} from './h2c-limits.js';
import { headerBlockFragment, dataPayload } from './padding.js';
import { fieldValue as field, HpackDecoder } from './hpack-decoder.js';
import { HpackError } from './hpack-error.js';
import { trailersOnlyError, unsupportedMediaType } from './grpc-reply.js';
import { ResponseSender } from './response-sender.js';

/** Stream ids we reset and whose late frames we still ignore (RFC 9113 section 5.4.2). */
const REMEMBERED_RESETS = 256;
/** A peer that stops reading while we keep answering is cut off past this many buffered octets. */
const MAX_BUFFERED_OUTPUT = 8 * 1024 * 1024;
/** After GOAWAY, the socket is destroyed if the peer has not closed it within this time. */
const CLOSE_GRACE_MS = 1000;

/** An in-progress header block waiting for CONTINUATION frames. */
interface PendingBlock {
  readonly streamId: number;
  readonly flags: number;
  readonly fragments: Buffer[];
  size: number;
}

/**
 * One cleartext HTTP/2 (h2c, RFC 9113) server connection that serves unary
 * `envoy.service.auth.v3.Authorization/Check` and nothing else: other methods get gRPC
 * UNIMPLEMENTED (Envoy's ext_authz cluster carries only Check), non-gRPC requests HTTP 415.
 * Requests are answered synchronously in the tick their last frame arrives when the authorizer is
 * synchronous, and all frames produced by one read go out in one socket write; answers the
 * authorizer gives as promises are written together once the promise jobs of that turn have run. Any protocol
 * error closes the connection with GOAWAY and the matching error code and is logged; nothing
 * thrown here escapes to the process.
 */
export class H2cCheckConnection {
  private readonly splitter = new FrameSplitter();
  private readonly hpack = new HpackDecoder();
  private readonly streams = new Map<number, CheckStream>();
  private readonly recentlyReset = new Set<number>();
  private readonly limits: H2cLimits;
  private readonly sender: ResponseSender;
  private readonly control: ControlFrames;
  private readonly fields: string[] = [];
  private out: Buffer[] = [];
  private pendingBlock: PendingBlock | undefined;
  private lastStreamId = 0;
  private settingsSeen = false;
  private receiveWindow: number;
  private unreleased = 0;
  private closed = false;
  private flushScheduled = false;

  constructor(
    private readonly socket: Socket,
    private readonly options: H2cConnectionOptions,
    initialBytes?: Buffer,
  ) {
    this.limits = options.limits ?? DEFAULT_H2C_LIMITS;
    this.receiveWindow = this.limits.connectionWindowBytes;
    const emit = (bytes: Buffer): void => {
      this.out.push(bytes);
    };
    this.sender = new ResponseSender(emit, (stream) => this.finish(stream));
    this.control = new ControlFrames({
      streams: this.streams,
      sender: this.sender,
      emit,
      lastStreamId: () => this.lastStreamId,
      peerReset: (stream) => {
        this.remember(stream.id);
        this.drop(stream);
      },
      reset: (stream, code) => this.reset(stream, code),
      peerGoaway: () => this.closeIfIdle(),
    });
    socket.setNoDelay(true);
    this.out.push(
      settingsFrame([
        [SETTINGS_MAX_CONCURRENT_STREAMS, this.limits.maxConcurrentStreams],
        [SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW_BYTES],
        [SETTINGS_MAX_HEADER_LIST_SIZE, this.limits.maxHeaderBlockBytes],
      ]),
      windowUpdateFrame(0, this.limits.connectionWindowBytes - DEFAULT_WINDOW_SIZE),
    );
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (err) =>
      options.logger.debug({ error: errorMessage(err) }, 'ext_authz h2c: socket error'),
    );
    socket.on('close', () => this.onClose());
    if (initialBytes !== undefined && initialBytes.length > 0) this.receive(initialBytes);
    else this.flush();
  }

  /** Sends GOAWAY(NO_ERROR) and closes once in-flight answers are written (server shutdown). */
  shutdown(): void {
    if (this.closed) return;
    this.out.push(goawayFrame(this.lastStreamId, NO_ERROR, 'server shutting down'));
    this.close();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      this.splitter.push(chunk, this.onFrame);
    } catch (err) {
      this.connectionError(err);
    }
    this.flush();
  }

  /**
   * Writes once the promise jobs of this turn have run: a tick scheduled from a promise job runs
   * after the whole microtask queue, so answers that settle together share one socket write,
   * without waiting for another turn of the event loop.
   */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    process.nextTick(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private readonly onFrame = (type: number, flags: number, streamId: number, payload: Buffer): void => {
    if (this.closed) return;
    if (!this.settingsSeen) {
      if (type !== FRAME_SETTINGS) throw new H2ConnectionError(PROTOCOL_ERROR, 'first frame is not SETTINGS');
      this.settingsSeen = true;
    }
    if (this.pendingBlock !== undefined && type !== FRAME_CONTINUATION) {
      throw new H2ConnectionError(PROTOCOL_ERROR, 'header block interrupted before END_HEADERS');
    }
    switch (type) {
      case FRAME_DATA:
        this.onData(flags, streamId, payload);
        return;
      case FRAME_HEADERS:
        this.onHeaders(flags, streamId, payload);
        return;
      case FRAME_CONTINUATION:
        this.onContinuation(flags, streamId, payload);
        return;
      default:
        this.control.handle(type, flags, streamId, payload);
    }
  };

  private onHeaders(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'HEADERS on stream 0');
    const fragment = headerBlockFragment(flags, payload);
    if (fragment.length > this.limits.maxHeaderBlockBytes) {
      throw new H2ConnectionError(ENHANCE_YOUR_CALM, 'header block too large');
    }
    if (flags & FLAG_END_HEADERS) {
      this.onHeaderBlock(streamId, flags, fragment);
      return;
    }
    this.pendingBlock = { streamId, flags, fragments: [fragment], size: fragment.length };
  }

  private onContinuation(flags: number, streamId: number, payload: Buffer): void {
    const pending = this.pendingBlock;
    if (pending === undefined || pending.streamId !== streamId) {
      throw new H2ConnectionError(PROTOCOL_ERROR, 'CONTINUATION without an open header block');
    }
    pending.fragments.push(payload);
    pending.size += payload.length;
    if (pending.size > this.limits.maxHeaderBlockBytes) {
      throw new H2ConnectionError(ENHANCE_YOUR_CALM, 'header block too large');
    }
    if (!(flags & FLAG_END_HEADERS)) return;
    this.pendingBlock = undefined;
    this.onHeaderBlock(streamId, pending.flags, Buffer.concat(pending.fragments, pending.size));
  }

  private onHeaderBlock(streamId: number, flags: number, block: Buffer): void {
    const fields = this.fields;
    fields.length = 0;
    this.hpack.decode(block, 0, block.length, fields);
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    const open = this.streams.get(streamId);
    if (open !== undefined) {
      // Request trailers: they must end the stream.
      if (open.remoteClosed) throw new H2ConnectionError(STREAM_CLOSED, 'HEADERS after END_STREAM');
      if (!endStream) this.reset(open, PROTOCOL_ERROR);
      else this.endOfRequest(open);
      return;
    }
    if (streamId <= this.lastStreamId) {
      if (this.recentlyReset.has(streamId)) return;
      throw new H2ConnectionError(STREAM_CLOSED, `HEADERS on closed stream ${streamId}`);
    }
    if (streamId % 2 === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'even stream id from a client');
    this.lastStreamId = streamId;
    if (this.streams.size >= this.limits.maxConcurrentStreams) {
      this.out.push(rstStreamFrame(streamId, REFUSED_STREAM));
      this.remember(streamId);
      return;
    }
    const path = field(fields, ':path');
    const stream = new CheckStream(streamId, path === CHECK_METHOD_PATH, this.control.peerInitialWindow);
    this.streams.set(streamId, stream);
    stream.remoteClosed = endStream;
    if (
      field(fields, ':method') !== 'POST' ||
      !field(fields, 'content-type')?.startsWith('application/grpc')
    ) {
      this.out.push(unsupportedMediaType(streamId));
      this.finish(stream);
    } else if (!stream.isCheck) {
      this.out.push(trailersOnlyError(streamId, GRPC_UNIMPLEMENTED, `unknown method ${path ?? ''}`));
      this.finish(stream);
    } else if (endStream) {
      this.endOfRequest(stream);
    }
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'DATA on stream 0');
    this.receiveWindow -= payload.length;
    if (this.receiveWindow < 0) throw new H2ConnectionError(FLOW_CONTROL_ERROR, 'connection window exceeded');
    const data = dataPayload(flags, payload);
    const stream = this.streams.get(streamId);
    if (stream === undefined) {
      if (streamId > this.lastStreamId) throw new H2ConnectionError(PROTOCOL_ERROR, 'DATA on an idle stream');
      this.release(payload.length);
      if (this.recentlyReset.has(streamId)) return;
      throw new H2ConnectionError(STREAM_CLOSED, `DATA on closed stream ${streamId}`);
    }
    stream.received += payload.length;
    if (stream.remoteClosed) {
      this.reset(stream, STREAM_CLOSED);
      return;
    }
    if (stream.received > STREAM_WINDOW_BYTES) {
      this.reset(stream, FLOW_CONTROL_ERROR);
      return;
    }
    if (data.length > 0) {
      stream.chunks.push(data);
      stream.bodySize += data.length;
    }
    if (flags & FLAG_END_STREAM) stream.remoteClosed = true;
    if (stream.bodySize > MAX_CHECK_MESSAGE_BYTES + GRPC_PREFIX_BYTES) {
      this.out.push(trailersOnlyError(streamId, GRPC_RESOURCE_EXHAUSTED, 'message larger than 1 MiB'));
      this.finish(stream);
    } else if (stream.remoteClosed) {
      this.endOfRequest(stream);
    }
  }

  /** The client finished its request: answer it now, or when the authorizer's promise settles. */
  private endOfRequest(stream: CheckStream): void {
    stream.remoteClosed = true;
    const body = stream.body();
    stream.chunks.length = 0;
    this.releaseStream(stream);
    const outcome = answerCheck(body, this.options.authorize, this.options.logger);
    if (!(outcome instanceof Promise)) {
      this.respond(stream, outcome);
      return;
    }
    void outcome.then((settled) => {
      if (this.closed || this.streams.get(stream.id) !== stream) return;
      this.respond(stream, settled);
      this.scheduleFlush();
    });
  }

  private respond(stream: CheckStream, outcome: CheckOutcome): void {
    if (outcome instanceof CheckFailure) {
      this.out.push(trailersOnlyError(stream.id, outcome.grpcStatus, outcome.message));
      this.finish(stream);
    } else {
      this.sender.sendOk(stream, outcome);
    }
  }

  /** Our side is done with `stream`: forget it, and reset it if the client is still sending. */
  private finish(stream: CheckStream): void {
    if (!stream.remoteClosed) {
      // RFC 9113 section 8.1: a complete response may end a request early with RST_STREAM(NO_ERROR).
      this.out.push(rstStreamFrame(stream.id, NO_ERROR));
      this.remember(stream.id);
    }
    this.drop(stream);
  }

  private reset(stream: CheckStream, code: number): void {
    this.out.push(rstStreamFrame(stream.id, code));
    this.remember(stream.id);
    this.drop(stream);
  }

  private drop(stream: CheckStream): void {
    this.streams.delete(stream.id);
    this.sender.forget(stream);
    this.releaseStream(stream);
    this.closeIfIdle();
  }

  private releaseStream(stream: CheckStream): void {
    this.release(stream.received);
    stream.received = 0;
  }

  /** Gives consumed request octets back to the peer's connection window, in batches. */
  private release(octets: number): void {
    this.unreleased += octets;
    if (this.unreleased >= this.limits.connectionWindowBytes / 4) {
      this.out.push(windowUpdateFrame(0, this.unreleased));
      this.receiveWindow += this.unreleased;
      this.unreleased = 0;
    }
  }

  private remember(streamId: number): void {
    this.recentlyReset.add(streamId);
    if (this.recentlyReset.size > REMEMBERED_RESETS) {
      this.recentlyReset.delete(this.recentlyReset.values().next().value as number);
    }
  }

  private closeIfIdle(): void {
    if (this.control.peerGoingAway && this.streams.size === 0 && !this.closed) this.close();
  }

  private connectionError(err: unknown): void {
    const code =
      err instanceof H2ConnectionError
        ? err.code
        : err instanceof HpackError
          ? COMPRESSION_ERROR
          : INTERNAL_ERROR;
    this.options.logger.warn(
      { error: errorMessage(err), h2_error_code: code, remote: this.socket.remoteAddress },
      'ext_authz h2c: connection error, sending GOAWAY and closing',
    );
    this.out.push(goawayFrame(this.lastStreamId, code, errorMessage(err)));
    this.close();
  }

  private close(): void {
    this.closed = true;
    this.flush();
    this.streams.clear();
    this.socket.end();
    setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  private onClose(): void {
    this.closed = true;
    this.streams.clear();
    this.out = [];
  }

  private flush(): void {
    const out = this.out;
    if (out.length === 0) return;
    this.out = [];
    if (this.socket.destroyed || !this.socket.writable) return;
    this.socket.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out));
    if (this.socket.writableLength > MAX_BUFFERED_OUTPUT) {
      this.options.logger.warn(
        { remote: this.socket.remoteAddress },
        'ext_authz h2c: peer not reading, closing',
      );
      this.closed = true;
      this.socket.destroy();
    }
  }
}
