import {
  CLUSTER_LOAD_ASSIGNMENT_TYPE,
  CLUSTER_TYPE,
  RESOURCE_TYPES,
  SHORT_NAMES,
} from '../../proto/type-urls.js';
import type { ResourceType } from '../../proto/type-urls.js';
import { responseHeaderSize, splitBySize, stringFieldSize } from './chunking.js';
import { DeltaTypeState } from './delta-state.js';
import type { DeltaChunk, DeltaPlan } from './delta-state.js';
import type { DeltaCall } from './grpc-service.js';
import { encodeDeltaResponse } from './messages.js';
import type { DeltaRequest } from './messages.js';
import { deltaResourceOf, deltaSizeOf } from './prepared.js';
import type { PreparedResource, PreparedType } from './prepared.js';
import { StreamBase } from './stream-base.js';
import type { AdsStream, StreamContext } from './stream-base.js';

/**
 * One `DeltaAggregatedResources` stream (incremental xDS over ADS). Each type runs its own
 * `DeltaTypeState`; this class feeds it requests and snapshots and writes the planned responses.
 *
 * Order on a push: additions and updates CDS, EDS, LDS, RDS, then removals RDS, LDS, EDS, CDS, so
 * nothing is removed before whatever replaces it is in place; stale clusters go last [1]. That
 * order alone does not wait for Envoy's ACKs; the runtime removes a cluster from the snapshot
 * only after every stream reported that its Envoy holds routes without it (`AdsStreamEvent`).
 *
 * Chunking: a type's changes are split so no response exceeds `maxMessageBytes`; each chunk has its
 * own nonce and is marked sent when it is queued, without waiting for ACKs. That is correct because
 * a delta response only adds, updates or removes the resources it names (never implies deletion of
 * others [2]), Envoy applies and ACKs each response in arrival order, and every ACK/NACK names its
 * chunk by nonce [3], so several may be outstanding. Only the writes are paced
 * (`StreamBase.sendQueued`): over turns of the event loop, and at most a couple of responses (or
 * one full chunk) written and not yet answered, so an Envoy spending seconds on each CDS chunk does
 * not have the rest queued ahead of the keepalive PING; the order never changes.
 *
 * [1] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-eventual-consistency-considerations
 * [2] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#grouping-resources-into-responses
 * [3] https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-protocol-delta
 */
export class DeltaStream extends StreamBase<DeltaRequest> {
  private readonly states = new Map<ResourceType, DeltaTypeState>(
    RESOURCE_TYPES.map((type) => [type, new DeltaTypeState(type)]),
  );

  constructor(call: DeltaCall, ctx: StreamContext, onDone: (stream: AdsStream) => void) {
    super(call, ctx, onDone, 'delta');
  }

  protected handle(request: DeltaRequest, type: ResourceType): void {
    const state = this.stateOf(type);
    const verdict = state.classify(request.responseNonce, request.errorDetail !== undefined);
    if (verdict === 'stale') {
      this.ctx.metrics.staleRequests += 1;
      this.log.debug(
        { type: SHORT_NAMES[type], nonce: request.responseNonce },
        'xDS: stale nonce; ACK/NACK ignored',
      );
    } else if (verdict === 'ack') {
      state.onAck(request.responseNonce);
      this.ctx.metrics.ack(type);
    } else if (verdict === 'nack') {
      const chunk = state.onNack(request.responseNonce);
      if (chunk !== undefined) this.recordNack(request, type, chunk);
    }
    if (state.applySubscription(request)) this.push([type]);
  }

  protected asked(type: ResourceType): boolean {
    return this.stateOf(type).started;
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
    const plans: Array<[DeltaTypeState, PreparedType, DeltaPlan]> = [];
    // Clusters updated in place wait for their endpoints (DeltaTypeState.refresh): EDS follows CDS.
    const order: readonly ResourceType[] =
      types.includes(CLUSTER_TYPE) && !types.includes(CLUSTER_LOAD_ASSIGNMENT_TYPE)
        ? [...types, CLUSTER_LOAD_ASSIGNMENT_TYPE]
        : types;
    for (const type of order) {
      const state = this.stateOf(type);
      if (!state.started) continue;
      const typeData = prepared.type(type);
      const plan = state.plan(typeData);
      plans.push([state, typeData, plan]);
      if (type === CLUSTER_TYPE) {
        // Clusters the client already had (an update, not an addition), before this plan is sent.
        const updated = plan.upserts.filter((resource) => state.knows(resource.name));
        if (updated.length > 0)
          this.stateOf(CLUSTER_LOAD_ASSIGNMENT_TYPE).refresh(updated.map((resource) => resource.name));
      }
    }
    for (const [state, typeData, plan] of plans) {
      if (plan.upserts.length > 0 || (plan.mustAnswer && plan.removals.length === 0)) {
        this.sendUpserts(state, typeData, plan.upserts);
      }
    }
    for (const [state, typeData, plan] of plans.reverse()) {
      if (plan.removals.length > 0) this.sendRemovals(state, typeData, plan.removals);
    }
  }

  private sendUpserts(
    state: DeltaTypeState,
    prepared: PreparedType,
    upserts: readonly PreparedResource[],
  ): void {
    const budget = this.ctx.maxMessageBytes - responseHeaderSize(prepared.typeUrl, prepared.version);
    const groups =
      upserts.length === 0 ? [[]] : splitBySize(upserts, budget, (r) => deltaSizeOf(prepared.typeUrl, r));
    for (const group of groups) {
      const only = group[0];
      if (group.length === 1 && only !== undefined && deltaSizeOf(prepared.typeUrl, only) > budget) {
        this.log.warn(
          {
            type: SHORT_NAMES[state.type],
            name: only.name,
            bytes: deltaSizeOf(prepared.typeUrl, only),
            max: this.ctx.maxMessageBytes,
          },
          'xDS: one resource exceeds maxMessageBytes; sent alone',
        );
      }
      if (!this.sendChunk(state, prepared, group, [])) return;
    }
  }

  private sendRemovals(state: DeltaTypeState, prepared: PreparedType, removals: readonly string[]): void {
    const budget = this.ctx.maxMessageBytes - responseHeaderSize(prepared.typeUrl, prepared.version);
    for (const group of splitBySize(removals, budget, stringFieldSize)) {
      if (!this.sendChunk(state, prepared, [], group)) return;
    }
  }

  private sendChunk(
    state: DeltaTypeState,
    prepared: PreparedType,
    upserts: readonly PreparedResource[],
    removals: readonly string[],
  ): boolean {
    const nonce = this.nextNonce();
    let estimate = 0;
    for (const r of upserts) estimate += deltaSizeOf(prepared.typeUrl, r);
    const sent = this.sendQueued(
      nonce,
      () => {
        const bytes = encodeDeltaResponse({
          system_version_info: prepared.version,
          type_url: prepared.typeUrl,
          resources: upserts.map((r) => deltaResourceOf(prepared.typeUrl, r)),
          removed_resources: removals,
          nonce,
        });
        this.log.debug(
          {
            type: SHORT_NAMES[state.type],
            nonce,
            upserts: upserts.length,
            removals: removals.length,
            bytes: bytes.length,
          },
          'xDS: delta response sent',
        );
        return bytes;
      },
      estimate,
    );
    if (!sent) return false;
    if (!state.markSent(nonce, upserts, removals)) {
      this.log.warn(
        { type: SHORT_NAMES[state.type] },
        'xDS: client left too many responses unanswered; oldest forgotten',
      );
    }
    this.ctx.metrics.responseSent(state.type);
    return true;
  }

  private recordNack(request: DeltaRequest, type: ResourceType, chunk: DeltaChunk): void {
    const detail = request.errorDetail ?? { code: 0, message: '' };
    const rejected = [
      ...chunk.upserts.map(([name, version]) => `${name}@${version}`),
      ...chunk.removals.map((name) => `-${name}`),
    ];
    const shown =
      rejected.length > 20 ? [...rejected.slice(0, 20), `(+${rejected.length - 20} more)`] : rejected;
    this.ctx.metrics.nack(type, {
      mode: 'delta',
      nodeId: this.nodeId ?? '',
      typeUrl: request.typeUrl,
      nonce: request.responseNonce,
      rejected: shown.join(', '),
      code: detail.code,
      message: detail.message,
    });
    this.log.warn(
      {
        nodeId: this.nodeId,
        type: SHORT_NAMES[type],
        typeUrl: request.typeUrl,
        nonce: request.responseNonce,
        rejected: shown,
        code: detail.code,
        error_detail: detail.message,
      },
      `xDS NACK from ${this.nodeId ?? ''} for ${SHORT_NAMES[type]}: ${detail.message}`,
    );
    this.reportNack(type, detail.message);
  }

  private stateOf(type: ResourceType): DeltaTypeState {
    const state = this.states.get(type);
    if (state === undefined) throw new Error(`no delta state for ${type}`);
    return state;
  }
}
