import type { CheckStream } from './check-stream.js';
import {
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW_SIZE,
  FRAME_DATA,
  frame,
  FLOW_CONTROL_ERROR,
  H2ConnectionError,
  MAX_WINDOW_SIZE,
} from './frame.js';
import {
  grpcFramed,
  headersFrame,
  OK_TRAILERS_BLOCK,
  RESPONSE_HEADERS_BLOCK,
  unaryOkResponse,
} from './grpc-reply.js';

/**
 * The send side of flow control for successful responses (RFC 9113 sections 5.2 and 6.9): the
 * peer's connection window and per-stream windows, and its SETTINGS_MAX_FRAME_SIZE. A response
 * that fits goes out as one Buffer (HEADERS, DATA, trailers); a larger one is split into DATA
 * frames of at most the peer's frame size, as far as the windows allow, and the rest waits for
 * WINDOW_UPDATE or a larger SETTINGS_INITIAL_WINDOW_SIZE. Trailers follow the last DATA frame.
 */
export class ResponseSender {
  /** Octets we may still send on the connection. */
  private connectionWindow = DEFAULT_WINDOW_SIZE;
  /** The peer's SETTINGS_MAX_FRAME_SIZE. */
  maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
  private readonly blocked = new Set<CheckStream>();

  constructor(
    private readonly emit: (bytes: Buffer) => void,
    /** Called once a stream's response is completely sent (trailers included). */
    private readonly done: (stream: CheckStream) => void,
  ) {}

  /** Sends `message` (a CheckResponse) on `stream` with `grpc-status: 0` trailers. */
  sendOk(stream: CheckStream, message: Buffer): void {
    stream.answered = true;
    const dataLength = message.length + 5;
    if (
      dataLength <= this.maxFrameSize &&
      dataLength <= this.connectionWindow &&
      dataLength <= stream.sendWindow
    ) {
      this.emit(unaryOkResponse(stream.id, message));
      this.connectionWindow -= dataLength;
      stream.sendWindow -= dataLength;
      this.done(stream);
      return;
    }
    this.emit(headersFrame(stream.id, RESPONSE_HEADERS_BLOCK, false));
    stream.pendingData = grpcFramed(message);
    stream.pendingOffset = 0;
    stream.pendingTrailers = OK_TRAILERS_BLOCK;
    this.pump(stream);
  }

  /** The stream is gone (reset or finished): stop sending on it. */
  forget(stream: CheckStream): void {
    this.blocked.delete(stream);
    stream.pendingData = undefined;
  }

  /** WINDOW_UPDATE on the connection. */
  connectionWindowUpdate(increment: number): void {
    this.connectionWindow += increment;
    if (this.connectionWindow > MAX_WINDOW_SIZE) {
      throw new H2ConnectionError(FLOW_CONTROL_ERROR, 'connection window over 2^31-1');
    }
    for (const stream of [...this.blocked]) this.pump(stream);
  }

  /** WINDOW_UPDATE on a stream; false when it overflows (the caller resets the stream). */
  streamWindowUpdate(stream: CheckStream, increment: number): boolean {
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW_SIZE) return false;
    if (this.blocked.has(stream)) this.pump(stream);
    return true;
  }

  /** SETTINGS_INITIAL_WINDOW_SIZE changed by `delta`: every open stream's window moves with it. */
  initialWindowChanged(delta: number, streams: Iterable<CheckStream>): void {
    for (const stream of streams) {
      stream.sendWindow += delta;
      if (stream.sendWindow > MAX_WINDOW_SIZE) {
        throw new H2ConnectionError(FLOW_CONTROL_ERROR, 'stream window over 2^31-1');
      }
    }
    if (delta > 0) for (const stream of [...this.blocked]) this.pump(stream);
  }

  private pump(stream: CheckStream): void {
    const data = stream.pendingData;
    if (data === undefined) return;
    while (stream.pendingOffset < data.length) {
      const size = Math.min(
        data.length - stream.pendingOffset,
        this.connectionWindow,
        stream.sendWindow,
        this.maxFrameSize,
      );
      if (size <= 0) {
        this.blocked.add(stream);
        return;
      }
      this.emit(
        frame(FRAME_DATA, 0, stream.id, data.subarray(stream.pendingOffset, stream.pendingOffset + size)),
      );
      stream.pendingOffset += size;
      this.connectionWindow -= size;
      stream.sendWindow -= size;
    }
    this.blocked.delete(stream);
    stream.pendingData = undefined;
    this.emit(headersFrame(stream.id, stream.pendingTrailers ?? OK_TRAILERS_BLOCK, true));
    this.done(stream);
  }
}
