import { RESOURCE_TYPES, SHORT_NAMES } from '../../proto/type-urls.js';
import { OVERLAY_TYPE } from '../snapshot/snapshot-store.js';

import type { AdsStreamEvent } from '../server/events.js';
import type { Snapshot } from '../snapshot/types.js';
import { EnvoyHoldings } from './retirement.js';

/** The types a build decides: every served type but the snapshot store's overlay. */
const BUILT_TYPES = RESOURCE_TYPES.filter((type) => type !== OVERLAY_TYPE);

/** How long a build waits for Envoy's verdict unless told otherwise. */
export const DEFAULT_VERDICT_TIMEOUT_MS = 30_000;

/**
 * What the connected Envoys made of one build:
 * - `taken`: every connected Envoy holds the build's own snapshot, every type it asked for, ACKed;
 * - `rejected`: an Envoy NACKed a response sent for the build (it keeps what it held before);
 * - `superseded`: a newer build was published before either (this one is no longer the target);
 * - `no-envoy`: no Envoy was connected: nothing can confirm it (an Envoy that connects later gets
 *   it, and a NACK then is logged by the ADS server, not reported as a reload);
 * - `unconfirmed`: Envoys were connected but had neither ACKed nor NACKed it after the bound.
 */
export type EnvoyVerdict =
  | { readonly kind: 'taken'; readonly envoys: number }
  | {
      readonly kind: 'rejected';
      readonly nodeId: string;
      readonly type: string;
      readonly errorDetail: string;
    }
  | { readonly kind: 'superseded' }
  | { readonly kind: 'no-envoy' }
  | { readonly kind: 'unconfirmed'; readonly waitingFor: number; readonly afterMs: number };

interface Pending {
  readonly snapshot: Snapshot;
  readonly resolve: (verdict: EnvoyVerdict) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Waits for the connected Envoys' verdict on the latest build, so the reload
 * loop reports a build Envoy NACKed as a failed reload and puts the authorization state back to a
 * version Envoy took. Fed every ADS stream event (`AdsServer.onEvent`); `verdictOn` is asked once
 * per build, after its snapshot was published (make-before-break may publish intermediate steps
 * first: the verdict waits for the build's own snapshot). Only one build waits at a time: asking
 * for a newer one settles the older as `superseded`.
 *
 * A NACK is attributed to the waiting build: responses are pushed when a snapshot is published, so
 * a NACK that arrives after `verdictOn` answers a response of that build (an older response's
 * nonce is stale by then and never reported). Waiting is bounded by `timeoutMs`. No I/O.
 */
export class EnvoyVerdicts {
  private readonly holdings = new EnvoyHoldings();
  private pending: Pending | undefined;
  private checkQueued = false;

  constructor(private readonly options: { readonly timeoutMs?: number } = {}) {}

  /** Feeds one ADS stream event (pass this to `AdsServer.onEvent`). */
  observe(event: AdsStreamEvent): void {
    this.holdings.observe(event);
    if (this.pending === undefined) return;
    if (event.kind === 'nacked') {
      this.settle({
        kind: 'rejected',
        nodeId: event.nodeId,
        type: SHORT_NAMES[event.type],
        errorDetail: event.errorDetail,
      });
      return;
    }
    // ACKs of one response arrive type by type: decide once after the events of this turn.
    if (this.checkQueued) return;
    this.checkQueued = true;
    queueMicrotask(() => {
      this.checkQueued = false;
      this.check();
    });
  }

  /**
   * Resolves with the verdict on `snapshot` (see `EnvoyVerdict`): at once when no Envoy is
   * connected or every one already holds it (a build that changed nothing Envoy sees).
   */
  verdictOn(snapshot: Snapshot): Promise<EnvoyVerdict> {
    this.settle({ kind: 'superseded' });
    if (this.holdings.streamCount === 0) return Promise.resolve({ kind: 'no-envoy' });
    if (this.lagging(snapshot) === 0)
      return Promise.resolve({ kind: 'taken', envoys: this.holdings.streamCount });
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_VERDICT_TIMEOUT_MS;
    return new Promise<EnvoyVerdict>((resolve) => {
      const timer = setTimeout(
        () => this.settle({ kind: 'unconfirmed', waitingFor: this.lagging(snapshot), afterMs: timeoutMs }),
        timeoutMs,
      );
      timer.unref();
      this.pending = { snapshot, resolve, timer };
    });
  }

  /** Settles a waiting build as `superseded` (at shutdown). */
  close(): void {
    this.settle({ kind: 'superseded' });
  }

  private check(): void {
    const pending = this.pending;
    if (pending === undefined) return;
    if (this.holdings.streamCount === 0) this.settle({ kind: 'no-envoy' });
    else if (this.lagging(pending.snapshot) === 0)
      this.settle({ kind: 'taken', envoys: this.holdings.streamCount });
  }

  /** Envoys not holding `snapshot`; the overlay's type is not the build's and does not count. */
  private lagging(snapshot: Snapshot): number {
    return this.holdings.lagging(snapshot, BUILT_TYPES).length;
  }

  private settle(verdict: EnvoyVerdict): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    pending.resolve(verdict);
  }
}
