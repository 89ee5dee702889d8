import type { ResourceType } from '../../proto/type-urls.js';
import { isFullSetType } from './prepared.js';
import type { PreparedResource, PreparedType } from './prepared.js';
import { sotwResourceSize, splitBySize } from './chunking.js';

/** Where a type stands on a SotW stream (see `SotwTypeState`). */
export type SotwPhase = 'idle' | 'awaiting-ack';

/** How a request relates to what this stream sent for its type. */
export type SotwVerdict = 'initial' | 'stale' | 'ack' | 'nack' | 'update';

/** What a response for this type should contain. `names` is undefined for "every resource". */
export interface SotwPlan {
  readonly version: string;
  readonly names: readonly string[] | undefined;
  /** RDS/EDS: the resource version of each of `names`, recorded as delivered when sent. */
  readonly resourceVersions?: readonly string[];
}

interface SentRecord {
  readonly version: string;
  readonly nonce: string;
  /** Every resource of `version` was included (wildcard LDS/CDS). */
  readonly all: boolean;
  readonly names: Set<string>;
  /** RDS/EDS: the resource versions the response carried, by name. */
  readonly versions: ReadonlyMap<string, string> | undefined;
}

/** Rejected versions kept per stream and type; old ones are forgotten beyond this. */
const MAX_REJECTED = 64;

/**
 * The state of one resource type on one SotW stream, as an explicit state machine.
 *
 * Phases: `idle` (nothing unanswered: nothing sent yet, or the last response was ACKed or NACKed)
 * and `awaiting-ack` (a response is out; only a request echoing its nonce answers it).
 *
 * - A request is classified by its `response_nonce` against the last nonce sent for this type:
 *   before anything was sent every request is a subscription (`initial`); afterwards a different
 *   nonce is `stale` and ignored entirely, because the server must not answer a stale nonce [1];
 *   the latest nonce while awaiting is an `ack`, or a `nack` when `error_detail` is present
 *   (detected by its presence, not by comparing versions [2]); the latest nonce again after it
 *   was answered is an `update` of the subscription.
 * - A NACK adds the sent version to `rejected`; a rejected version is never sent again on this
 *   stream, only a later, different version is.
 * - `plan` decides whether anything must be sent: a new type version, or requested names that were
 *   not in the last response (a changed subscription is answered even at the same version [3]).
 * - RDS and EDS are incremental even in SotW: a response need not repeat resources the client has,
 *   and omitting one removes nothing [4]. For them the state remembers each resource's delivered
 *   version and sends only requested resources whose version differs, at most `budget` bytes per
 *   response; the rest follow one response per ACK. So 10,000 per-host RouteConfigurations go out
 *   in a few messages under the size limit, and a one-route change sends one resource. A NACKed
 *   resource stays recorded at the version it was sent, so it is not re-sent until it changes.
 *
 * [1] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-resource-update
 * [2] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-ack-nack
 * [3] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-resource-hints
 * [4] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#grouping-resources-into-responses
 *
 * Pure (no I/O): the stream feeds it requests and snapshots and writes what it plans.
 */
export class SotwTypeState {
  phase: SotwPhase = 'idle';
  /** The client asked for this type at least once on this stream. */
  requested = false;
  /** The version the client last ACKed (or reported as in use in a NACK). */
  ackedVersion: string | undefined;
  readonly rejected = new Set<string>();
  private wildcard = false;
  private explicitEver = false;
  private readonly names = new Set<string>();
  private sent: SentRecord | undefined;
  /** RDS/EDS: name -> the resource version last sent for it (whether ACKed, pending or NACKed). */
  private readonly delivered = new Map<string, string>();
  /** RDS/EDS: name -> the resource version the client ACKed last (what it holds). */
  private readonly acked = new Map<string, string>();

  constructor(readonly type: ResourceType) {}

  /** The last response sent for this type, if any. */
  get lastSent(): { readonly version: string; readonly nonce: string } | undefined {
    return this.sent;
  }

  /** Classifies a request by its nonce and `error_detail` (see the class comment). */
  classify(responseNonce: string, hasError: boolean): SotwVerdict {
    if (this.sent === undefined) return 'initial';
    if (responseNonce !== this.sent.nonce) return 'stale';
    if (this.phase === 'awaiting-ack') return hasError ? 'nack' : 'ack';
    return 'update';
  }

  /** ACK: the client applied the last response; `versionInfo` is what it now runs. */
  onAck(versionInfo: string): void {
    this.ackedVersion = versionInfo;
    for (const [name, version] of this.sent?.versions ?? [])
      if (this.names.has(name)) this.acked.set(name, version);
    this.phase = 'idle';
  }

  /** NACK: the last response was rejected; returns the rejected version, never to be sent again. */
  onNack(versionInfo: string): string {
    const rejected = this.sent?.version ?? '';
    this.rejected.add(rejected);
    if (this.rejected.size > MAX_REJECTED)
      this.rejected.delete(this.rejected.values().next().value as string);
    this.ackedVersion = versionInfo;
    this.phase = 'idle';
    return rejected;
  }

  /**
   * Applies `resource_names`. For LDS/CDS an empty list on a stream that never named anything is the
   * legacy wildcard and "*" is the explicit one; RDS/EDS always use the names as given.
   */
  applyNames(resourceNames: readonly string[]): void {
    this.requested = true;
    const fullSet = isFullSetType(this.type);
    if (resourceNames.length === 0 && !this.explicitEver) {
      this.wildcard = fullSet;
    } else {
      this.explicitEver = true;
      this.wildcard = fullSet && resourceNames.includes('*');
    }
    this.names.clear();
    for (const name of resourceNames) if (!(fullSet && name === '*')) this.names.add(name);
    // Names no longer requested are forgotten, so a later re-request is answered again.
    if (this.sent !== undefined && !this.sent.all) {
      for (const name of this.sent.names) if (!this.names.has(name)) this.sent.names.delete(name);
    }
    for (const name of this.delivered.keys()) if (!this.names.has(name)) this.delivered.delete(name);
    for (const name of this.acked.keys()) if (!this.names.has(name)) this.acked.delete(name);
  }

  /**
   * RDS/EDS: sends `names` again on the next plan even if they were delivered at the current
   * version (see `DeltaTypeState.refresh`: an updated cluster waits for its endpoints).
   */
  refresh(names: Iterable<string>): void {
    for (const name of names) this.delivered.delete(name);
  }

  /**
   * The version of `prepared` the client holds of this type, or undefined while it does not hold
   * it (a response awaits its ACK, or it NACKed one and keeps an older version). LDS/CDS/SRDS: the
   * last response was ACKed at the type's version. RDS/EDS: nothing awaits an ACK and every
   * requested resource that exists was ACKed at its current version (the type version may change
   * through resources this client never asked for).
   */
  held(prepared: PreparedType): string | undefined {
    if (this.phase !== 'idle') return undefined;
    if (isFullSetType(this.type))
      return this.ackedVersion === prepared.version ? prepared.version : undefined;
    for (const name of this.names) {
      const resource = prepared.byName.get(name);
      if (resource !== undefined && this.acked.get(name) !== resource.version) return undefined;
    }
    return prepared.version;
  }

  /**
   * What to send for `prepared` now, or undefined when the client already has it (or rejected it).
   * `budget` bounds the resource bytes of an RDS/EDS response (see the class comment); LDS, CDS
   * and SRDS responses must be whole and ignore it.
   */
  plan(prepared: PreparedType, budget = Number.POSITIVE_INFINITY): SotwPlan | undefined {
    if (!this.requested) return undefined;
    if (!isFullSetType(this.type)) return this.planIncremental(prepared, budget);
    const version = prepared.version;
    if (this.rejected.has(version)) return undefined;
    const sent = this.sent;
    if (this.wildcard) {
      if (sent !== undefined && sent.all && sent.version === version) return undefined;
      return { version, names: undefined };
    }
    const include = [...this.names].filter((name) => prepared.byName.has(name));
    if (
      sent !== undefined &&
      sent.version === version &&
      (sent.all || include.every((n) => sent.names.has(n)))
    ) {
      return undefined;
    }
    return { version, names: include };
  }

  /** RDS/EDS: the requested resources not yet delivered at their current version, up to `budget`. */
  private planIncremental(prepared: PreparedType, budget: number): SotwPlan | undefined {
    const pending: PreparedResource[] = [];
    for (const name of this.names) {
      const resource = prepared.byName.get(name);
      if (resource !== undefined && this.delivered.get(name) !== resource.version) pending.push(resource);
    }
    if (pending.length === 0) return undefined;
    const [first = []] = splitBySize(pending, budget, (resource) =>
      sotwResourceSize(prepared.typeUrl, resource.bytes.length),
    );
    return {
      version: prepared.version,
      names: first.map((resource) => resource.name),
      resourceVersions: first.map((resource) => resource.version),
    };
  }

  /** Records that `plan` went out with `nonce`; the type now awaits its ACK. */
  markSent(plan: SotwPlan, nonce: string): void {
    plan.resourceVersions?.forEach((version, index) =>
      this.delivered.set(plan.names?.[index] as string, version),
    );
    this.sent = {
      version: plan.version,
      nonce,
      all: plan.names === undefined,
      names: new Set(plan.names ?? []),
      versions:
        plan.resourceVersions === undefined
          ? undefined
          : new Map(plan.resourceVersions.map((version, index) => [plan.names?.[index] as string, version])),
    };
    this.phase = 'awaiting-ack';
  }
}
