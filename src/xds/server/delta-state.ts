import type { ResourceType } from '../../proto/type-urls.js';
import { isFullSetType } from './prepared.js';
import type { PreparedResource, PreparedType } from './prepared.js';

/** How a delta request relates to the responses pending for its type (see `DeltaTypeState`). */
export type DeltaVerdict = 'request' | 'stale' | 'ack' | 'nack';

/** What one type needs: resources to add or update, and names to remove. */
export interface DeltaPlan {
  readonly upserts: readonly PreparedResource[];
  readonly removals: readonly string[];
  /** Nothing was sent for this type yet: answer even if empty, so the client's init can finish. */
  readonly mustAnswer: boolean;
}

/** One sent, unanswered response. */
export interface DeltaChunk {
  readonly upserts: ReadonlyArray<readonly [name: string, version: string]>;
  readonly removals: readonly string[];
}

interface InflightEntry {
  /** undefined: a removal is in flight. */
  readonly version: string | undefined;
  readonly nonce: string;
}

/** The subscription part of a delta request. */
export interface DeltaSubscription {
  readonly subscribe: readonly string[];
  readonly unsubscribe: readonly string[];
  readonly initialVersions: ReadonlyMap<string, string>;
}

/** `rejected` marker for a NACKed removal. */
const REMOVAL = '\u0000removal';
/** Unanswered responses kept per type; a client that never answers cannot grow this forever. */
const MAX_PENDING = 1024;

/**
 * The state of one resource type on one delta (incremental) stream [1].
 *
 * - `has`: what the client holds, by name and version: seeded from `initial_resource_versions` on
 *   the first request of the type (a reconnecting client tells us what it kept), then updated only
 *   by ACKs of what we sent.
 * - `inflight`: what we sent and is not answered yet. Diffs compare the snapshot against
 *   "in flight, else held", so an update already on its way is not sent twice.
 * - `pending`: every unanswered response by nonce. Each delta response is self-contained, so
 *   several may be outstanding (chunks, or a new snapshot before the ACK); an ACK or NACK names the
 *   response it answers by nonce. A nonce that is not pending is stale: its ACK/NACK is ignored,
 *   but subscription changes in the same request are still honoured, as the protocol requires
 *   ("the server must honor changes to the subscription state even if the nonce is stale" [1]).
 * - `rejected`: resource versions the client NACKed; they are not sent again until they change.
 * - Subscriptions: `wildcard` (LDS/CDS only: a first request naming nothing, or "*") and explicit
 *   `names`. Subscribing to a name forgets what we think the client has, so it is sent again [2];
 *   unsubscribing forgets the name so a later subscribe resends it. Named (un)subscriptions keep
 *   the plan incremental: Envoy subscribes to each new cluster's endpoints and each new host's
 *   routes one request at a time, and re-planning every name of a 10,000-resource type for each
 *   of them held the answer (and the new route) back by ~10 ms.
 *
 * Pure (no I/O): the stream feeds it requests and snapshots and writes what it plans.
 *
 * [1] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-delta
 * [2] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-delta-subscribe
 */
export class DeltaTypeState {
  started = false;
  answered = false;
  readonly has = new Map<string, string>();
  readonly rejected = new Map<string, string>();
  private wildcard = false;
  private readonly names = new Set<string>();
  private readonly inflight = new Map<string, InflightEntry>();
  private readonly pending = new Map<string, DeltaChunk>();
  private readonly forcedRemovals = new Set<string>();
  /**
   * The prepared type of the last plan, while nothing but ACKs happened since: then the next plan
   * only needs what differs between it and the new one (`planFrom`), not a pass over every name.
   * A NACK, a wildcard change or a forgotten response clears it (the next plan is full); named
   * (un)subscriptions and late ACKs only mark their names to `reconsider`.
   */
  private basis: PreparedType | undefined;
  /**
   * Names whose client-side state changed outside a plan since the last one (subscribed, or
   * unsubscribed under a wildcard, or a late ACK of a name we had forgotten): with a `basis`, the
   * next plan considers them as a full plan would.
   */
  private readonly reconsider = new Set<string>();

  /**
   * `incremental: false` plans every name on every plan (the reference the incremental planner
   * must agree with; tests compare the two).
   */
  constructor(
    readonly type: ResourceType,
    private readonly incremental = true,
  ) {}

  /** Classifies a request: no nonce is a plain (subscription) request; see the class comment. */
  classify(responseNonce: string, hasError: boolean): DeltaVerdict {
    if (responseNonce === '') return 'request';
    if (!this.pending.has(responseNonce)) return 'stale';
    return hasError ? 'nack' : 'ack';
  }

  /** ACK of the response `nonce`: the client now holds what it carried. */
  onAck(nonce: string): DeltaChunk | undefined {
    const chunk = this.take(nonce);
    if (chunk === undefined) return undefined;
    for (const [name, version] of chunk.upserts) {
      if (this.interested(name)) {
        this.has.set(name, version);
        // Sent before the name was forgotten (resubscribed): what the client holds now is news to
        // the last plan. (With a newer response in flight, that one decides.)
        if (!this.inflight.has(name)) this.reconsider.add(name);
      }
      this.settle(name, nonce);
    }
    for (const name of chunk.removals) {
      this.has.delete(name);
      if (!this.inflight.has(name)) this.reconsider.add(name);
      this.settle(name, nonce);
    }
    return chunk;
  }

  /** NACK of the response `nonce`: its versions are marked rejected; the client keeps what it had. */
  onNack(nonce: string): DeltaChunk | undefined {
    const chunk = this.take(nonce);
    if (chunk === undefined) return undefined;
    this.basis = undefined;
    for (const [name, version] of chunk.upserts) {
      this.rejected.set(name, version);
      this.settle(name, nonce);
    }
    for (const name of chunk.removals) {
      this.rejected.set(name, REMOVAL);
      this.settle(name, nonce);
    }
    return chunk;
  }

  /** Applies subscribe/unsubscribe (and, on the first request, initial versions); true when a diff is due. */
  applySubscription(request: DeltaSubscription): boolean {
    if (!this.started) this.basis = undefined;
    const first = !this.started;
    this.started = true;
    const fullSet = isFullSetType(this.type);
    if (first && request.subscribe.length === 0 && request.unsubscribe.length === 0) this.wildcard = fullSet;
    for (const name of request.subscribe) {
      if (fullSet && name === '*') {
        this.wildcard = true;
        this.basis = undefined;
        continue;
      }
      this.names.add(name);
      this.forget(name);
      this.reconsider.add(name);
    }
    for (const name of request.unsubscribe) this.unsubscribe(name, fullSet);
    if (first) for (const [name, version] of request.initialVersions) this.has.set(name, version);
    return first || request.subscribe.length > 0 || request.unsubscribe.length > 0;
  }

  /**
   * Diffs `prepared` against what the client has or is being sent. The caller sends the whole
   * plan; it becomes the basis the next plan starts from.
   */
  plan(prepared: PreparedType): DeltaPlan {
    const basis = this.incremental ? this.basis : undefined;
    this.basis = prepared;
    if (basis !== undefined) return this.withReconsidered(this.planFrom(basis, prepared), prepared);
    this.reconsider.clear();
    const upserts: PreparedResource[] = [];
    const consider = (resource: PreparedResource): void => {
      if (this.effective(resource.name) === resource.version) return;
      if (this.rejected.get(resource.name) === resource.version) return;
      upserts.push(resource);
    };
    if (this.wildcard) {
      for (const resource of prepared.list) consider(resource);
    } else {
      for (const name of this.names) {
        const resource = prepared.byName.get(name);
        if (resource !== undefined) consider(resource);
      }
    }
    const removals = new Set<string>();
    for (const name of this.knownNames()) {
      if (!prepared.byName.has(name) && this.rejected.get(name) !== REMOVAL) removals.add(name);
    }
    for (const name of this.forcedRemovals) if (!prepared.byName.has(name)) removals.add(name);
    return { upserts, removals: [...removals], mustAnswer: !this.answered };
  }

  /**
   * The plan from `basis` (the last plan, fully sent, since then only ACKed) to `prepared`: only
   * the resources whose name or version differs are considered, in one merge over both
   * name-sorted lists; an unchanged type version means nothing differs at all, and when `prepared`
   * names what changed since `basis`'s version, only those names are looked at.
   */
  private planFrom(basis: PreparedType, prepared: PreparedType): DeltaPlan {
    const upserts: PreparedResource[] = [];
    const removals: string[] = [];
    if (basis.version === prepared.version) return { upserts, removals, mustAnswer: !this.answered };
    const changes = prepared.changes;
    if (changes !== undefined && changes.from === basis.version) {
      // Every other name is the same in both (see PreparedType.changes); sorted, as the merge goes.
      for (const name of changes.names) {
        const now = prepared.byName.get(name);
        const old = basis.byName.get(name);
        if (now !== undefined) {
          if (old?.version !== now.version) this.upsertInto(upserts, now);
        } else if (old !== undefined) {
          if (this.effective(name) !== undefined && this.rejected.get(name) !== REMOVAL) removals.push(name);
        }
      }
      return { upserts, removals, mustAnswer: !this.answered };
    }
    const before = basis.list;
    const after = prepared.list;
    let i = 0;
    let j = 0;
    while (i < before.length || j < after.length) {
      const old = before[i];
      const now = after[j];
      if (old !== undefined && now !== undefined && old.name === now.name) {
        if (old.version !== now.version) this.upsertInto(upserts, now);
        i++;
        j++;
      } else if (now !== undefined && (old === undefined || now.name < old.name)) {
        this.upsertInto(upserts, now);
        j++;
      } else {
        const name = (old as PreparedResource).name;
        if (this.effective(name) !== undefined && this.rejected.get(name) !== REMOVAL) removals.push(name);
        i++;
      }
    }
    return { upserts, removals, mustAnswer: !this.answered };
  }

  /** Adds `resource` to `upserts` when the client wants it and holds (or was sent) another version. */
  private upsertInto(upserts: PreparedResource[], resource: PreparedResource): void {
    if (!this.interested(resource.name)) return;
    if (this.effective(resource.name) === resource.version) return;
    if (this.rejected.get(resource.name) === resource.version) return;
    upserts.push(resource);
  }

  /**
   * `plan` plus what the subscriptions since the last plan call for: the newly subscribed names
   * (forgotten, so sent if they exist) and forced removals. Everything else the client holds was
   * settled by the last plan, so this gives what a full plan would.
   */
  private withReconsidered(plan: DeltaPlan, prepared: PreparedType): DeltaPlan {
    if (this.reconsider.size === 0 && this.forcedRemovals.size === 0) return plan;
    const upserts = [...plan.upserts];
    const removals = [...plan.removals];
    const planned = new Set(upserts.map((resource) => resource.name));
    const removing = new Set(removals);
    for (const name of this.reconsider) {
      const resource = prepared.byName.get(name);
      if (resource === undefined) {
        const held = this.effective(name) !== undefined && this.rejected.get(name) !== REMOVAL;
        if ((held || this.forcedRemovals.has(name)) && !removing.has(name)) {
          removals.push(name);
          removing.add(name);
        }
        continue;
      }
      if (planned.has(name) || !this.interested(name)) continue;
      if (this.effective(name) === resource.version || this.rejected.get(name) === resource.version) continue;
      upserts.push(resource);
      planned.add(name);
    }
    this.reconsider.clear();
    for (const name of this.forcedRemovals) {
      if (!prepared.byName.has(name) && !removing.has(name)) removals.push(name);
    }
    return { upserts, removals, mustAnswer: plan.mustAnswer };
  }

  /** Records a sent response; returns false when an old pending response had to be dropped. */
  markSent(nonce: string, upserts: readonly PreparedResource[], removals: readonly string[]): boolean {
    this.answered = true;
    this.pending.set(nonce, { upserts: upserts.map((r) => [r.name, r.version] as const), removals });
    for (const resource of upserts) {
      this.inflight.set(resource.name, { version: resource.version, nonce });
      this.forcedRemovals.delete(resource.name);
    }
    for (const name of removals) {
      this.inflight.set(name, { version: undefined, nonce });
      this.forcedRemovals.delete(name);
    }
    if (this.pending.size <= MAX_PENDING) return true;
    this.pending.delete(this.pending.keys().next().value as string);
    this.basis = undefined;
    return false;
  }

  /**
   * The version of `prepared` the client holds of this type, or undefined while it does not: a
   * response awaits its ACK or NACK, or the client NACKed a version `prepared` still has (it keeps
   * an older one). With nothing pending and nothing rejected, the last plans sent every difference
   * and the client ACKed them all, so it holds `prepared`.
   */
  held(prepared: PreparedType): string | undefined {
    if (this.pending.size > 0) return undefined;
    for (const [name, version] of this.rejected) {
      const current = prepared.byName.get(name);
      if (current !== undefined && !this.interested(name)) continue;
      if (current === undefined ? version === REMOVAL && this.has.has(name) : current.version === version)
        return undefined;
    }
    return prepared.version;
  }

  /**
   * Sends `names` again on the next plan even if the client holds them at the current version:
   * when a cluster is updated in place, Envoy warms a new instance of it that waits for an EDS
   * response (until `initial_fetch_timeout`, 15 s by default) before it replaces the old one, and
   * Envoy holds its CDS ACK until then. Only names the client subscribes to count.
   */
  refresh(names: readonly string[]): void {
    for (const name of names) {
      if (!this.names.has(name) || this.effective(name) === undefined) continue;
      this.forget(name);
      this.reconsider.add(name);
    }
  }

  /** True when the client holds `name`, or has it on its way, at some version. */
  knows(name: string): boolean {
    return this.effective(name) !== undefined;
  }

  /** Number of responses awaiting an ACK or NACK. */
  get pendingCount(): number {
    return this.pending.size;
  }

  private unsubscribe(name: string, fullSet: boolean): void {
    this.reconsider.delete(name);
    if (fullSet && name === '*') {
      this.basis = undefined;
      this.wildcard = false;
      for (const known of this.knownNames()) if (!this.names.has(known)) this.forget(known);
      return;
    }
    this.names.delete(name);
    this.forget(name);
    // Wildcard plus a specific name: the client cannot tell whether to keep it, so the server must
    // answer with the resource (still in the wildcard) or its removal:
    // https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-unsubscribe
    if (this.wildcard) {
      this.forcedRemovals.add(name);
      this.reconsider.add(name);
    }
  }

  private interested(name: string): boolean {
    return this.wildcard || this.names.has(name);
  }

  private effective(name: string): string | undefined {
    const entry = this.inflight.get(name);
    return entry !== undefined ? entry.version : this.has.get(name);
  }

  private knownNames(): string[] {
    const names: string[] = [];
    for (const name of this.has.keys()) if (this.effective(name) !== undefined) names.push(name);
    for (const [name, entry] of this.inflight)
      if (entry.version !== undefined && !this.has.has(name)) names.push(name);
    return names;
  }

  private forget(name: string): void {
    this.has.delete(name);
    this.inflight.delete(name);
  }

  private take(nonce: string): DeltaChunk | undefined {
    const chunk = this.pending.get(nonce);
    this.pending.delete(nonce);
    return chunk;
  }

  private settle(name: string, nonce: string): void {
    if (this.inflight.get(name)?.nonce === nonce) this.inflight.delete(name);
  }
}
