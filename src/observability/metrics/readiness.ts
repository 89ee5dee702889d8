import { errorMessage } from '../../shared/errors.js';
import type { RecordBackend } from '../../session/records.js';
import { LISTENER_TYPE, ROUTE_CONFIGURATION_TYPE } from '../../proto/type-urls.js';
import type { AdsStreamEvent } from '../../xds/server/events.js';

/** How long `/readyz` waits for the session store's `ping` (ms). */
export const STORE_PING_TIMEOUT_MS = 1000;

/** What `/readyz` found: ready or not, and each check's state (`ok`, or what it waits for). */
export interface ReadinessReport {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, string>>;
}

/** Options of `Readiness`. */
export interface ReadinessOptions {
  /** This process serves xDS: it is ready only once an Envoy has ACKed a config. */
  readonly envoy: boolean;
  /** The session store (its record backend), when this process uses sessions. */
  readonly store?: Pick<RecordBackend, 'ping' | 'watch'>;
  /** Bound on each `ping` in `check` (default STORE_PING_TIMEOUT_MS). */
  readonly pingTimeoutMs?: number;
}

/**
 * Whether this process is ready to take traffic: where it serves xDS, an Envoy has
 * ACKed the listeners and route configurations of a config (the first ACK latches: a later push
 * still being applied keeps the process ready, Envoy serving the config before it), and the
 * session store answers.
 *
 * Two views, for the two kinds of probe:
 * - `check()`, for `/readyz`: the ACK, and a live `ping` of the store bounded by `pingTimeoutMs`;
 * - `serving` and `onChange`, pushed to the gRPC health service, which cannot ask: the ACK, and
 *   the store's change feed not reported `lost` (it is `resumed` once the store answers again).
 * Feed it the ADS server's events (`observe`); `close` stops following the store.
 */
export class Readiness {
  private envoyAcked: boolean;
  private storeLost = false;
  /** Per ADS stream, the types its Envoy ACKed. */
  private readonly acked = new Map<number, Set<string>>();
  private readonly listeners = new Set<(serving: boolean) => void>();
  private readonly unwatch: () => void;

  constructor(private readonly options: ReadinessOptions) {
    this.envoyAcked = !options.envoy;
    this.unwatch =
      options.store?.watch((change) => {
        if (change.kind === 'lost') this.update(() => (this.storeLost = true));
        if (change.kind === 'resumed') this.update(() => (this.storeLost = false));
      }) ?? (() => undefined);
  }

  /** Whether the gRPC health service should say SERVING now (see the class comment). */
  get serving(): boolean {
    return this.envoyAcked && !this.storeLost;
  }

  /** Calls `listener` with `serving` each time it changes; returns an unsubscribe. */
  onChange(listener: (serving: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Feeds one ADS stream event (pass this to `AdsServer.onEvent`). */
  observe(event: AdsStreamEvent): void {
    if (this.envoyAcked) return;
    if (event.kind === 'closed') {
      this.acked.delete(event.stream);
      return;
    }
    if (event.kind !== 'acked') return;
    const types = this.acked.get(event.stream) ?? new Set<string>();
    types.add(event.type);
    this.acked.set(event.stream, types);
    if (types.has(LISTENER_TYPE) && types.has(ROUTE_CONFIGURATION_TYPE)) {
      this.acked.clear();
      this.update(() => (this.envoyAcked = true));
    }
  }

  /** The `/readyz` answer: the ACK and a bounded `ping` of the store, each named in `checks`. */
  async check(): Promise<ReadinessReport> {
    const checks: Record<string, string> = {};
    if (this.options.envoy)
      checks['envoy'] = this.envoyAcked ? 'ok' : 'no Envoy has acknowledged a config yet';
    if (this.options.store !== undefined) checks['session_store'] = await this.ping(this.options.store);
    return { ready: Object.values(checks).every((state) => state === 'ok'), checks };
  }

  /** Stops following the store's change feed. */
  close(): void {
    this.unwatch();
    this.listeners.clear();
  }

  private async ping(store: Pick<RecordBackend, 'ping'>): Promise<string> {
    const timeoutMs = this.options.pingTimeoutMs ?? STORE_PING_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
    });
    try {
      return await Promise.race([
        store.ping().then(
          () => 'ok',
          (err: unknown) => `unavailable: ${errorMessage(err)}`,
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  private update(change: () => void): void {
    const before = this.serving;
    change();
    if (this.serving === before) return;
    for (const listener of this.listeners) listener(this.serving);
  }
}
