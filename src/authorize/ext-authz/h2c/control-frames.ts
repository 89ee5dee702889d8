import type { CheckStream } from './check-stream.js';
import {
  DEFAULT_MAX_FRAME_SIZE,
  DEFAULT_WINDOW_SIZE,
  FLAG_ACK,
  FLOW_CONTROL_ERROR,
  frame,
  FRAME_GOAWAY,
  FRAME_PING,
  FRAME_PRIORITY,
  FRAME_PUSH_PROMISE,
  FRAME_RST_STREAM,
  FRAME_SETTINGS,
  FRAME_SIZE_ERROR,
  FRAME_WINDOW_UPDATE,
  H2ConnectionError,
  MAX_ALLOWED_FRAME_SIZE,
  MAX_WINDOW_SIZE,
  PROTOCOL_ERROR,
  SETTINGS_ACK,
  SETTINGS_ENABLE_PUSH,
  SETTINGS_INITIAL_WINDOW_SIZE,
  SETTINGS_MAX_FRAME_SIZE,
} from './frame.js';
import type { ResponseSender } from './response-sender.js';

/** What the control frames act on: the connection's streams and its stream-level actions. */
export interface ControlHost {
  readonly streams: ReadonlyMap<number, CheckStream>;
  readonly sender: ResponseSender;
  emit(bytes: Buffer): void;
  lastStreamId(): number;
  /** The peer reset `stream`: forget it without answering. */
  peerReset(stream: CheckStream): void;
  /** A stream error: RST_STREAM with `code`. */
  reset(stream: CheckStream, code: number): void;
  /** The peer sent GOAWAY: finish what is open, then close. */
  peerGoaway(): void;
}

/**
 * The connection-management frames of RFC 9113 section 6 for a server: SETTINGS (applied and
 * acknowledged), PING (answered), WINDOW_UPDATE (send windows), RST_STREAM, GOAWAY, PRIORITY
 * (validated, otherwise ignored), PUSH_PROMISE (never valid from a client) and unknown types
 * (ignored, section 5.5). Violations throw `H2ConnectionError` or reset the one stream.
 */
export class ControlFrames {
  /** The peer's SETTINGS_INITIAL_WINDOW_SIZE: the send window of each new stream. */
  peerInitialWindow = DEFAULT_WINDOW_SIZE;
  peerGoingAway = false;

  constructor(private readonly host: ControlHost) {}

  handle(type: number, flags: number, streamId: number, payload: Buffer): void {
    switch (type) {
      case FRAME_SETTINGS:
        this.onSettings(flags, streamId, payload);
        return;
      case FRAME_PING:
        if (payload.length !== 8)
          throw new H2ConnectionError(FRAME_SIZE_ERROR, 'PING payload is not 8 octets');
        if (streamId !== 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'PING on a stream');
        if (!(flags & FLAG_ACK)) this.host.emit(frame(FRAME_PING, FLAG_ACK, 0, payload));
        return;
      case FRAME_WINDOW_UPDATE:
        this.onWindowUpdate(streamId, payload);
        return;
      case FRAME_RST_STREAM:
        this.onRstStream(streamId, payload);
        return;
      case FRAME_GOAWAY:
        if (streamId !== 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'GOAWAY on a stream');
        this.peerGoingAway = true;
        this.host.peerGoaway();
        return;
      case FRAME_PRIORITY:
        this.onPriority(streamId, payload);
        return;
      case FRAME_PUSH_PROMISE:
        throw new H2ConnectionError(PROTOCOL_ERROR, 'PUSH_PROMISE from a client');
      default:
      // Unknown frame types are ignored (RFC 9113 section 5.5).
    }
  }

  private onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'SETTINGS on a stream');
    if (flags & FLAG_ACK) {
      if (payload.length !== 0) throw new H2ConnectionError(FRAME_SIZE_ERROR, 'SETTINGS ACK with a payload');
      return;
    }
    if (payload.length % 6 !== 0)
      throw new H2ConnectionError(FRAME_SIZE_ERROR, 'SETTINGS length not a multiple of 6');
    for (let offset = 0; offset < payload.length; offset += 6) {
      const id = payload.readUInt16BE(offset);
      const value = payload.readUInt32BE(offset + 2);
      if (id === SETTINGS_ENABLE_PUSH && value > 1) {
        throw new H2ConnectionError(PROTOCOL_ERROR, 'SETTINGS_ENABLE_PUSH not 0 or 1');
      } else if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW_SIZE)
          throw new H2ConnectionError(FLOW_CONTROL_ERROR, 'initial window over 2^31-1');
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        this.host.sender.initialWindowChanged(delta, this.host.streams.values());
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < DEFAULT_MAX_FRAME_SIZE || value > MAX_ALLOWED_FRAME_SIZE) {
          throw new H2ConnectionError(PROTOCOL_ERROR, 'SETTINGS_MAX_FRAME_SIZE out of range');
        }
        this.host.sender.maxFrameSize = value;
      }
      // HEADER_TABLE_SIZE: our responses never use the peer's dynamic table. MAX_CONCURRENT_STREAMS:
      // a server opens none. MAX_HEADER_LIST_SIZE: our response blocks are tiny. Unknown: ignored.
    }
    this.host.emit(SETTINGS_ACK);
  }

  private onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new H2ConnectionError(FRAME_SIZE_ERROR, 'WINDOW_UPDATE is not 4 octets');
    const increment = payload.readUInt32BE(0) & MAX_WINDOW_SIZE;
    if (streamId === 0) {
      if (increment === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'connection WINDOW_UPDATE of 0');
      this.host.sender.connectionWindowUpdate(increment);
      return;
    }
    const stream = this.host.streams.get(streamId);
    if (stream === undefined) {
      if (streamId > this.host.lastStreamId()) {
        throw new H2ConnectionError(PROTOCOL_ERROR, 'WINDOW_UPDATE on an idle stream');
      }
      return;
    }
    if (increment === 0) this.host.reset(stream, PROTOCOL_ERROR);
    else if (!this.host.sender.streamWindowUpdate(stream, increment))
      this.host.reset(stream, FLOW_CONTROL_ERROR);
  }

  private onRstStream(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new H2ConnectionError(FRAME_SIZE_ERROR, 'RST_STREAM is not 4 octets');
    if (streamId === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'RST_STREAM on stream 0');
    if (streamId > this.host.lastStreamId())
      throw new H2ConnectionError(PROTOCOL_ERROR, 'RST_STREAM on an idle stream');
    const stream = this.host.streams.get(streamId);
    if (stream !== undefined) this.host.peerReset(stream);
  }

  private onPriority(streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new H2ConnectionError(PROTOCOL_ERROR, 'PRIORITY on stream 0');
    if (payload.length === 5) return;
    const stream = this.host.streams.get(streamId);
    if (stream !== undefined) this.host.reset(stream, FRAME_SIZE_ERROR);
    else this.host.emit(frame(FRAME_RST_STREAM, 0, streamId, Buffer.from([0, 0, 0, FRAME_SIZE_ERROR])));
  }
}
