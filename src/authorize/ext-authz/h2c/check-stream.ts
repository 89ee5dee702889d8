/**
 * One request stream of the h2c Check server and its lifecycle (RFC 9113 section 5.1), as far as
 * a unary gRPC server needs it: open until the client's END_STREAM (half-closed remote), then
 * answered; the request body is collected by reference; a response that flow control holds back
 * waits in `pendingData` with its trailers.
 */
export class CheckStream {
  /** The request body's DATA payloads, by reference. */
  readonly chunks: Buffer[] = [];
  bodySize = 0;
  /** DATA payload octets received (padding included), not yet given back to the connection window. */
  received = 0;
  /** The client sent END_STREAM. */
  remoteClosed = false;
  /** We sent (or queued) the whole response with END_STREAM. */
  answered = false;
  /** Octets we may still send on this stream (the peer's window). */
  sendWindow: number;
  /** Response DATA not yet sent (flow control), from `pendingOffset`, then `pendingTrailers`. */
  pendingData: Buffer | undefined;
  pendingOffset = 0;
  pendingTrailers: Buffer | undefined;

  constructor(
    readonly id: number,
    /** A Check call, or anything else (answered at once and dropped). */
    readonly isCheck: boolean,
    sendWindow: number,
  ) {
    this.sendWindow = sendWindow;
  }

  /** The request body as one Buffer (no copy when it came in one DATA frame). */
  body(): Buffer {
    if (this.chunks.length === 1) return this.chunks[0] as Buffer;
    return Buffer.concat(this.chunks, this.bodySize);
  }
}
