import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  ROUTE_CONFIGURATION_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  type ResourceType,
} from '../../proto/type-urls.js';
import type { AdsStreamEvent } from '../server/events.js';
import {
  addsClusters,
  isEmptyRetiring,
  retiredBy,
  withClustersOf,
  withRetiring,
  type Retiring,
} from '../snapshot/retiring.js';
import type { Snapshot } from '../snapshot/types.js';

/**
 * The types whose resources refer to clusters and carry route ids: listeners, scopes and route
 * configurations. A retirement ends once every Envoy holds the new snapshot's version of each of
 * them that it asked for.
 */
export const REFERRING_TYPES: readonly ResourceType[] = [
  LISTENER_TYPE,
  SCOPED_ROUTE_CONFIGURATION_TYPE,
  ROUTE_CONFIGURATION_TYPE,
];

/**
 * What the Envoy of each open ADS stream holds, per type it asked for: a type version, or
 * undefined while a response is unanswered or was NACKed. Fed `AdsStreamEvent`s; a closed stream
 * is forgotten (its Envoy, if it comes back, does so on a new stream). No I/O.
 */
export class EnvoyHoldings {
  private readonly streams = new Map<number, Map<ResourceType, string | undefined>>();

  observe(event: AdsStreamEvent): void {
    if (event.kind === 'closed') {
      this.streams.delete(event.stream);
      return;
    }
    // A NACK says why a type is pending; the `pending` event that goes with it says that it is.
    if (event.kind === 'nacked') return;
    let types = this.streams.get(event.stream);
    if (types === undefined) {
      types = new Map();
      this.streams.set(event.stream, types);
    }
    types.set(event.type, event.kind === 'acked' ? event.version : undefined);
  }

  /** How many open streams have asked for at least one type (the Envoys that count). */
  get streamCount(): number {
    return this.streams.size;
  }

  /**
   * The streams whose Envoy does not hold `snapshot`'s version of one of `types` it asked for
   * (a type it never asked for holds nothing that could refer to anything). Empty: every Envoy
   * holds them.
   */
  lagging(snapshot: Snapshot, types: readonly ResourceType[]): number[] {
    const lagging: number[] = [];
    for (const [stream, held] of this.streams) {
      if (types.some((type) => held.has(type) && held.get(type) !== snapshot.typeVersions[type]))
        lagging.push(stream);
    }
    return lagging;
  }
}

/** The types a change adding clusters must see every Envoy hold before routes may use them. */
export const CLUSTER_TYPES: readonly ResourceType[] = [CLUSTER_TYPE, CLUSTER_LOAD_ASSIGNMENT_TYPE];

/** What `Retirement` decided: the snapshot to serve now, and whether the change is complete. */
export interface RetirementStep {
  readonly serve: Snapshot;
  /** `serve` is the latest build itself and every Envoy holds its routes: nothing older is referred to. */
  readonly settled: boolean;
}

/**
 * Make-before-break as a state machine over snapshots and ADS events (no I/O, no clock). A build
 * goes out in up to three steps, each published once every Envoy holds the one before:
 *
 * 1. `adding` (only when the build adds clusters): the routes Envoy has, with the build's clusters
 *    and endpoints and every cluster served before (`withClustersOf`); it ends when every Envoy
 *    holds those clusters and endpoints, so no route ever refers to a cluster Envoy is still
 *    warming.
 * 2. `switching`: the build's routes, with the clusters the served snapshot has and the build
 *    lacks still there (`withRetiring`); it ends when every Envoy holds the build's listeners,
 *    scopes and route configurations, which no longer refer to them.
 * 3. The build's own snapshot (the same a restarted Portcullis serves): the dropped clusters go.
 *
 * A build while a change is pending starts over from what is served, which already carries every
 * cluster any Envoy may still use, so the sets merge and nothing referenced is dropped early.
 * When every Envoy already holds the build's routes (none connected, or a build that changed no
 * route), the build is served at once. An Envoy that never asked for a type holds nothing of it;
 * a closed stream no longer counts. Versions stay content hashes throughout.
 */
export class Retirement {
  private readonly holdings = new EnvoyHoldings();
  private latest: Snapshot | undefined;
  private serving: Snapshot | undefined;
  private retiring: Retiring | undefined;
  private phase: 'idle' | 'adding' | 'switching' = 'idle';

  /** The snapshot to serve for a new build `next`; see the class comment. */
  build(next: Snapshot): RetirementStep {
    this.latest = next;
    return this.advance(next);
  }

  observe(event: AdsStreamEvent): void {
    this.holdings.observe(event);
  }

  /** A change is pending: the latest build waits for some Envoy to hold a step of it. */
  get waiting(): boolean {
    return this.phase !== 'idle';
  }

  /**
   * The next snapshot to serve once every Envoy holds the current step, or undefined while some
   * Envoy does not (or nothing is pending).
   */
  settle(): RetirementStep | undefined {
    if (this.phase === 'idle' || this.latest === undefined) return undefined;
    if (this.lagging().length > 0) return undefined;
    return this.advance(this.latest);
  }

  /** Streams that keep the pending step waiting (empty when none is). */
  lagging(): number[] {
    if (this.phase === 'idle' || this.latest === undefined || this.serving === undefined) return [];
    return this.phase === 'adding'
      ? this.holdings.lagging(this.serving, CLUSTER_TYPES)
      : this.holdings.lagging(this.latest, REFERRING_TYPES);
  }

  /** Names of the clusters and endpoints served only until the pending change completes. */
  retiringNames(): { readonly clusters: readonly string[]; readonly endpoints: readonly string[] } {
    return {
      clusters: [...(this.retiring?.[CLUSTER_TYPE].keys() ?? [])],
      endpoints: [...(this.retiring?.[CLUSTER_LOAD_ASSIGNMENT_TYPE].keys() ?? [])],
    };
  }

  /** The step after what is served now, toward `latest`. */
  private advance(latest: Snapshot): RetirementStep {
    const served = this.serving;
    if (served === undefined || this.holdings.lagging(latest, REFERRING_TYPES).length === 0)
      return this.end(latest);
    const retiring = retiredBy(served, latest);
    this.retiring = isEmptyRetiring(retiring) ? undefined : retiring;
    if (addsClusters(served, latest)) {
      const adding = withClustersOf(served, latest);
      if (this.holdings.lagging(adding, CLUSTER_TYPES).length > 0) return this.serve(adding, 'adding');
    }
    return this.serve(withRetiring(latest, retiring), 'switching');
  }

  private serve(snapshot: Snapshot, phase: 'adding' | 'switching'): RetirementStep {
    this.serving = snapshot;
    this.phase = phase;
    return { serve: snapshot, settled: false };
  }

  private end(latest: Snapshot): RetirementStep {
    this.serving = latest;
    this.retiring = undefined;
    this.phase = 'idle';
    return { serve: latest, settled: true };
  }
}
