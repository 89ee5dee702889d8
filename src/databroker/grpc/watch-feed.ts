/**
 * The databroker client's change feed: one Watch stream per client, opened when the first
 * listener arrives and closed when the last one leaves, re-opened after it ends with capped,
 * jittered exponential backoff. Listeners hear `lost` once when the stream breaks (or its first
 * attempt fails) and `resumed` each time a stream is live again (its first message, `subscribed`),
 * the first time included: changes made before a stream was live were not seen, so a listener's
 * caches must drop everything then, exactly as after an outage.
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '../../shared/logger.js';
import type { RecordChange } from '../../session/records.js';
import type { WatchEventMessage } from './messages.js';

/** Reconnect delays of the Watch stream. */
export interface WatchBackoff {
  /** Delay before the first retry (ms); doubles per failed attempt. Default 100. */
  readonly initialMs?: number;
  /** Largest delay (ms). Default 5,000. */
  readonly maxMs?: number;
}

/** What the feed needs from its client. */
export interface WatchFeedOptions {
  /** Opens one Watch stream whose messages are already decoded. */
  readonly open: () => grpc.ClientReadableStream<WatchEventMessage>;
  readonly address: string;
  readonly logger: Logger;
  readonly backoff?: WatchBackoff;
  /** Randomness of the jitter, in [0, 1). Default Math.random. */
  readonly random?: () => number;
}

/** The feed (see the file comment). `close` ends the stream and every timer for good. */
export class WatchFeed {
  private readonly listeners = new Set<(change: RecordChange) => void>();
  private stream: grpc.ClientReadableStream<WatchEventMessage> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private live = false;
  private announcedLost = false;
  private closed = false;

  constructor(private readonly options: WatchFeedOptions) {}

  /** Adds `listener`, opening the stream if it is the first; returns the unsubscribe function. */
  add(listener: (change: RecordChange) => void): () => void {
    if (this.closed) return () => {};
    this.listeners.add(listener);
    if (this.stream === undefined && this.timer === undefined) this.connect();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Ends the stream and the retry timer; later `add` calls do nothing. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const stream = this.stream;
    this.stream = undefined;
    this.live = false;
    this.announcedLost = false;
    this.failures = 0;
    stream?.cancel();
  }

  private emit(change: RecordChange): void {
    for (const listener of [...this.listeners]) listener(change);
  }

  private connect(): void {
    this.timer = undefined;
    const stream = this.options.open();
    this.stream = stream;
    stream.on('data', (event: WatchEventMessage) => {
      if (this.stream !== stream) return;
      if (event.event === 'subscribed') {
        this.live = true;
        this.failures = 0;
        if (this.announcedLost) {
          this.options.logger.info({ databroker: this.options.address }, 'databroker change feed resumed');
        }
        this.announcedLost = false;
        this.emit({ kind: 'resumed' });
        return;
      }
      const changed = event.changed;
      if (!this.live || changed === null || changed === undefined) return;
      if (changed.kind === 'KIND_UNSPECIFIED') return;
      const kind = changed.kind === 'KIND_PUT' ? 'put' : 'delete';
      this.emit({ kind, type: changed.type, id: changed.id, version: changed.version });
    });
    // Ended streams report through 'status' (always emitted); 'error' only needs a listener.
    stream.on('error', () => {});
    stream.on('status', (status: grpc.StatusObject) => {
      if (this.stream === stream) this.ended(status);
    });
  }

  private ended(status: grpc.StatusObject): void {
    this.stream = undefined;
    this.live = false;
    if (this.closed || this.listeners.size === 0) return;
    if (!this.announcedLost) {
      this.announcedLost = true;
      this.options.logger.warn(
        { databroker: this.options.address, code: status.code, details: status.details },
        'databroker change feed lost; reconnecting (cached records are dropped once it is back)',
      );
      this.emit({ kind: 'lost' });
    }
    // A listener may have unsubscribed or closed the client while hearing `lost`.
    if (this.closed || this.listeners.size === 0 || this.stream !== undefined) return;
    const initial = this.options.backoff?.initialMs ?? 100;
    const max = this.options.backoff?.maxMs ?? 5_000;
    const ceiling = Math.min(max, initial * 2 ** Math.min(this.failures, 30));
    const random = this.options.random ?? Math.random;
    this.failures += 1;
    this.timer = setTimeout(() => this.connect(), ceiling * (0.5 + random() / 2));
    this.timer.unref();
  }
}
