import type { Logger } from '../../shared/logger.js';
import type { AdsStreamEvent } from '../server/events.js';
import type { SnapshotStore } from '../snapshot/snapshot-store.js';
import type { Snapshot } from '../snapshot/types.js';
import { Retirement } from './retirement.js';

/** Options of `MakeBeforeBreak`. */
export interface MakeBeforeBreakOptions {
  /** Where the snapshots go (the ADS server reads it). */
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /**
   * Called each time every connected Envoy holds the latest build's listeners and routes (at
   * once when none is connected): nothing older is referred to any more, so state kept for older
   * routes (the authorization state's removed route ids) can go.
   */
  readonly onSettled?: () => void;
}

/**
 * Publishes each build's snapshot so that Envoy never routes to a cluster it does not have:
 * clusters a build adds reach every Envoy before routes use them, and clusters it drops stay
 * until every ADS stream, SotW or delta, reported (`AdsServer.onEvent`) that its Envoy ACKed the
 * build's listeners, scopes and route configurations; then the build's own snapshot is published.
 * The policy is `Retirement`'s; this class wires it to the store and the ADS events.
 *
 * A retirement is checked once per turn of the event loop after the events that may end it (a
 * queued microtask), never inside the ADS stream that reported them, so publishing never
 * re-enters a stream in the middle of its own request.
 */
export class MakeBeforeBreak {
  private readonly retirement = new Retirement();
  private checkQueued = false;

  constructor(private readonly options: MakeBeforeBreakOptions) {}

  /** Serves `next` (with what it retires, while any Envoy may still refer to that). */
  publish(next: Snapshot): void {
    const { serve, settled } = this.retirement.build(next);
    this.options.store.publish(serve);
    if (settled) {
      this.options.onSettled?.();
      return;
    }
    const { clusters } = this.retirement.retiringNames();
    if (clusters.length > 0) {
      this.options.logger.info(
        { retiring: clusters.length, waitingFor: this.retirement.lagging().length, version: serve.version },
        'xDS: clusters the new config dropped stay until every Envoy has applied its routes',
      );
    }
  }

  /** Feeds one ADS stream event (pass this to `AdsServer.onEvent`). */
  observe(event: AdsStreamEvent): void {
    this.retirement.observe(event);
    if (!this.retirement.waiting || this.checkQueued) return;
    this.checkQueued = true;
    queueMicrotask(() => {
      this.checkQueued = false;
      this.settle();
    });
  }

  /** Names served only until the pending retirement ends (for logs and tests). */
  retiring(): { readonly clusters: readonly string[]; readonly endpoints: readonly string[] } {
    return this.retirement.retiringNames();
  }

  /** A build is waiting for some Envoy to apply its routes. */
  get waiting(): boolean {
    return this.retirement.waiting;
  }

  private settle(): void {
    const retired = this.retirement.retiringNames().clusters.length;
    const step = this.retirement.settle();
    if (step === undefined) return;
    this.options.store.publish(step.serve);
    if (!step.settled) return;
    if (retired > 0) {
      this.options.logger.info(
        { retired, version: step.serve.version },
        'xDS: every Envoy has applied the new routes; dropped clusters removed',
      );
    }
    this.options.onSettled?.();
  }
}
