import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  SHORT_NAMES,
} from '../../proto/type-urls.js';
import type { ResourceType } from '../../proto/type-urls.js';
import type { SotwCall } from './grpc-service.js';
import { encodeSotwResponse, withNonce } from './messages.js';
import { responseHeaderSize } from './chunking.js';
import type { SotwRequest } from './messages.js';
import { anyOf } from './prepared.js';
import type { PreparedResource, PreparedType } from './prepared.js';
import { SotwTypeState } from './sotw-state.js';
import type { SotwPlan } from './sotw-state.js';
import { StreamBase } from './stream-base.js';
import type { AdsStream, StreamContext } from './stream-base.js';

/**
 * One `StreamAggregatedResources` stream (state of the world over ADS). Each type runs its own
 * `SotwTypeState`; this class feeds it requests and snapshots and writes what it plans.
 *
 * - Nothing is sent before the node has a snapshot: a first LDS/CDS request before the first
 *   validated config is remembered and answered when one is published, so Envoy never sees an
 *   accidental empty LDS/CDS (which would delete every listener or cluster: security-threats.md 2.1).
 * - On a new snapshot, types are pushed CDS, EDS, LDS, RDS [1], each only if its version changed
 *   for this stream.
 * - A new version is sent even while an older response of the type awaits its ACK; the older nonce
 *   becomes stale. Waiting instead would let EDS/LDS/RDS overtake a pending CDS and break the
 *   make-before-break order; Envoy ACKs every response in order, so nothing is lost. (The
 *   writes themselves are paced by those ACKs, in order: `StreamBase.sendQueued`.)
 * - A stream alone cannot make-before-break a cluster removal (the CDS full set that drops a
 *   cluster would go before the RDS that stops using it); the runtime never publishes such a
 *   snapshot before every stream reported (`AdsStreamEvent`) that it holds routes without it
 *   (xds/publish/make-before-break.ts).
 *
 * [1] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-eventual-consistency-considerations
 */
export class SotwStream extends StreamBase<SotwRequest> {
  private readonly states = new Map<ResourceType, SotwTypeState>(
    RESOURCE_TYPES.map((type) => [type, new SotwTypeState(type)]),
  );
  /** The clusters of the last CDS response sent, by name. */
  private sentClusters: ReadonlyMap<string, PreparedResource> | undefined;

  constructor(call: SotwCall, ctx: StreamContext, onDone: (stream: AdsStream) => void) {
    super(call, ctx, onDone, 'sotw');
  }

  protected handle(request: SotwRequest, type: ResourceType): void {
    const state = this.stateOf(type);
    const verdict = state.classify(request.responseNonce, request.errorDetail !== undefined);
    switch (verdict) {
      case 'stale':
        this.ctx.metrics.staleRequests += 1;
        this.log.debug({ type: SHORT_NAMES[type], nonce: request.responseNonce }, 'xDS: stale nonce ignored');
        return;
      case 'ack':
        state.onAck(request.versionInfo);
        this.ctx.metrics.ack(type);
        break;
      case 'nack':
        this.recordNack(request, type, state.onNack(request.versionInfo));
        break;
      case 'initial':
      case 'update':
        break;
    }
    state.applyNames(request.resourceNames);
    this.push([type]);
  }

  protected asked(type: ResourceType): boolean {
    return this.stateOf(type).requested;
  }

  protected held(type: ResourceType, prepared: PreparedType): string | undefined {
    return this.stateOf(type).held(prepared);
  }

  protected pushAll(): void {
    this.push(RESOURCE_TYPES);
  }

  private push(types: readonly ResourceType[]): void {
    const prepared = this.currentSnapshot();
    if (prepared === undefined) return;
    // Clusters updated in place wait for their endpoints (DeltaTypeState.refresh): EDS follows CDS.
    const order: readonly ResourceType[] =
      types.includes(CLUSTER_TYPE) && !types.includes(CLUSTER_LOAD_ASSIGNMENT_TYPE)
        ? [...types, CLUSTER_LOAD_ASSIGNMENT_TYPE]
        : types;
    for (const type of order) {
      const typeData = prepared.type(type);
      const state = this.stateOf(type);
      const plan = state.plan(
        typeData,
        this.ctx.maxMessageBytes - responseHeaderSize(typeData.typeUrl, typeData.version),
      );
      if (plan === undefined) continue;
      this.send(state, typeData, plan);
      if (type === CLUSTER_TYPE) this.refreshUpdatedClusters(typeData);
    }
  }

  /** After a CDS response: the clusters whose version changed since the last one get their endpoints again. */
  private refreshUpdatedClusters(clusters: PreparedType): void {
    const before = this.sentClusters;
    this.sentClusters = clusters.byName;
    if (before === undefined) return;
    const updated: string[] = [];
    for (const [name, resource] of clusters.byName) {
      const old = before.get(name);
      if (old !== undefined && old.version !== resource.version) updated.push(name);
    }
    if (updated.length > 0) this.stateOf(CLUSTER_LOAD_ASSIGNMENT_TYPE).refresh(updated);
  }

  private send(state: SotwTypeState, prepared: PreparedType, plan: SotwPlan): void {
    const nonce = this.nextNonce();
    let estimate = 0;
    if (plan.names === undefined) for (const r of prepared.list) estimate += r.bytes.length;
    else for (const name of plan.names) estimate += prepared.byName.get(name)?.bytes.length ?? 0;
    const sent = this.sendQueued(
      nonce,
      () => {
        const bytes =
          plan.names === undefined
            ? withNonce(prepared.fullSotwBody(), nonce)
            : encodeSotwResponse({
                version_info: plan.version,
                type_url: prepared.typeUrl,
                resources: plan.names
                  .map((name) => prepared.byName.get(name))
                  .filter(isPrepared)
                  .map((resource) => anyOf(prepared.typeUrl, resource)),
                nonce,
              });
        if (bytes.length > this.ctx.maxMessageBytes) {
          // LDS, CDS and SRDS responses must be complete (RDS/EDS are split); say so loudly.
          this.log.warn(
            { type: SHORT_NAMES[state.type], bytes: bytes.length, max: this.ctx.maxMessageBytes },
            'xDS: SotW response exceeds maxMessageBytes; Envoy may reject it (use delta xDS)',
          );
        }
        return bytes;
      },
      estimate,
    );
    if (!sent) return;
    state.markSent(plan, nonce);
    this.ctx.metrics.responseSent(state.type);
    this.log.debug(
      {
        type: SHORT_NAMES[state.type],
        version: plan.version,
        nonce,
        resources: plan.names?.length ?? prepared.list.length,
      },
      'xDS: SotW response sent',
    );
  }

  private recordNack(request: SotwRequest, type: ResourceType, rejectedVersion: string): void {
    const detail = request.errorDetail ?? { code: 0, message: '' };
    this.ctx.metrics.nack(type, {
      mode: 'sotw',
      nodeId: this.nodeId ?? '',
      typeUrl: request.typeUrl,
      nonce: request.responseNonce,
      rejected: rejectedVersion,
      code: detail.code,
      message: detail.message,
    });
    this.log.warn(
      {
        nodeId: this.nodeId,
        type: SHORT_NAMES[type],
        typeUrl: request.typeUrl,
        rejectedVersion,
        versionInUse: request.versionInfo,
        nonce: request.responseNonce,
        code: detail.code,
        error_detail: detail.message,
      },
      `xDS NACK from ${this.nodeId ?? ''} for ${SHORT_NAMES[type]} version ${rejectedVersion}: ${detail.message}`,
    );
    this.reportNack(type, detail.message);
  }

  private stateOf(type: ResourceType): SotwTypeState {
    const state = this.states.get(type);
    if (state === undefined) throw new Error(`no SotW state for ${type}`);
    return state;
  }
}

function isPrepared(value: PreparedResource | undefined): value is PreparedResource {
  return value !== undefined;
}
