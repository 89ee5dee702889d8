/**
 * The change feed of one Redis backend: its listeners, the codec of the channel's messages (JSON,
 * as the put and delete scripts publish them) and the `lost`/`resumed` states. When the subscriber
 * connection fails the feed emits `lost` once, then publishes a heartbeat carrying this feed's own
 * nonce every `heartbeatMs` until that heartbeat comes back through the subscription: only then
 * is delivery proven and `resumed` emitted. (node-redis's Sentinel client reports no readiness
 * of its subscriber, so the proof is end to end for every kind of deployment.) At most one
 * heartbeat publish is pending at a time. A listener that throws is logged and does not stop the
 * others or the connection that delivers the messages.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type { RecordChange } from '../../session/records.js';

/** One message of the channel: a record change, or a feed's heartbeat. */
export type FeedMessage =
  | Extract<RecordChange, { kind: 'put' | 'delete' }>
  | { readonly kind: 'heartbeat'; readonly nonce: string };

/** A backend's feed; see the module comment. */
export class ChangeFeed {
  readonly #listeners = new Set<(change: RecordChange) => void>();
  readonly #logger: Logger;
  readonly #publish: (message: string) => Promise<unknown>;
  readonly #heartbeatMs: number;
  readonly #nonce = randomUUID();
  #lost = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    readonly logger: Logger;
    /** Publishes on the feed's channel (the heartbeat). */
    readonly publish: (message: string) => Promise<unknown>;
    readonly heartbeatMs?: number;
  }) {
    this.#logger = options.logger;
    this.#publish = options.publish;
    this.#heartbeatMs = options.heartbeatMs ?? 250;
  }

  /** Adds `listener`; returns the function that removes it (idempotent). */
  add(listener: (change: RecordChange) => void): () => void {
    const entry = (change: RecordChange): void => listener(change);
    this.#listeners.add(entry);
    return () => void this.#listeners.delete(entry);
  }

  /** Handles one message from the channel. */
  receive(text: string): void {
    const message = parseFeedMessage(text);
    if (message === undefined) {
      this.#logger.warn({ length: text.length }, 'ignored a malformed change-feed message');
    } else if (message.kind !== 'heartbeat') {
      this.#emit(message);
    } else if (message.nonce === this.#nonce && this.#lost) {
      this.#lost = false;
      clearTimeout(this.#timer);
      this.#emit({ kind: 'resumed' });
    }
  }

  /** The subscriber connection failed: emits `lost` (once) and starts proving delivery. */
  connectionLost(): void {
    if (this.#lost || this.#closed) return;
    this.#lost = true;
    this.#emit({ kind: 'lost' });
    this.#beat();
  }

  /** Removes every listener and stops the heartbeat (on close). */
  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    clearTimeout(this.#timer);
  }

  #beat(): void {
    this.#timer = setTimeout(() => {
      const heartbeat = JSON.stringify({ kind: 'heartbeat', nonce: this.#nonce });
      void this.#publish(heartbeat)
        .catch(() => {})
        .finally(() => {
          if (this.#lost && !this.#closed) this.#beat();
        });
    }, this.#heartbeatMs);
  }

  #emit(change: RecordChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (err) {
        this.#logger.error({ err: errorMessage(err), kind: change.kind }, 'a change-feed listener threw');
      }
    }
  }
}

/** Reads one channel message (`{kind,type,id,version}` or a heartbeat); undefined when it is neither. */
export function parseFeedMessage(text: string): FeedMessage | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { kind, type, id, version, nonce } = value as Record<string, unknown>;
  if (kind === 'heartbeat') return typeof nonce === 'string' ? { kind, nonce } : undefined;
  if ((kind !== 'put' && kind !== 'delete') || typeof type !== 'string' || typeof id !== 'string')
    return undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version <= 0) return undefined;
  return { kind, type, id, version };
}
