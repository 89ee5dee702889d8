// A large push is written over several turns of the event loop, in order, with the protocol state
// marked at once (StreamBase.sendQueued): checked on a DeltaStream over an in-memory call.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { DeltaStream } from '../../../../src/xds/server/delta-stream.js';
import type { DeltaCall } from '../../../../src/xds/server/grpc-service.js';
import { AdsMetrics } from '../../../../src/xds/server/metrics.js';
import { decodeDeltaResponse } from '../../../../src/xds/server/messages.js';
import type { DeltaRequest } from '../../../../src/xds/server/messages.js';
import { prepare } from '../../../../src/xds/server/prepared.js';
import type { PreparedSnapshot } from '../../../../src/xds/server/prepared.js';
import { silentLogger } from '../../../../src/shared/logger.js';
import { buildSnapshot, cluster, CDS } from './helpers.js';

class FakeCall extends EventEmitter {
  readonly written: Uint8Array[] = [];
  write(bytes: Uint8Array): boolean {
    this.written.push(bytes);
    return true;
  }
  end(): void {
    this.emit('close');
  }
  getPeer(): string {
    return 'fake';
  }
}

const request = (init: Partial<DeltaRequest>): DeltaRequest => ({
  kind: 'delta',
  nodeId: 'node',
  typeUrl: CDS,
  subscribe: [],
  unsubscribe: [],
  initialVersions: new Map(),
  responseNonce: '',
  errorDetail: undefined,
  ...init,
});

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a push past 256 KiB goes out one response per turn, in order; a small one at once', async () => {
  let current: PreparedSnapshot | undefined;
  const call = new FakeCall();
  const stream = new DeltaStream(
    call as unknown as DeltaCall,
    {
      snapshotFor: () => current,
      logger: silentLogger,
      metrics: new AdsMetrics(),
      maxMessageBytes: 64 * 1024,
      newStreamId: () => 1,
      emit: () => undefined,
    },
    () => undefined,
  );
  const names = Array.from({ length: 2000 }, (_, i) => `cluster-${String(i).padStart(4, '0')}`);
  const padded = (generation: number) =>
    buildSnapshot({
      clusters: names.map((name) => cluster(name, { alt_stat_name: `${generation}`.repeat(300) })),
    });
  current = prepare(buildSnapshot({ clusters: [cluster('small')] }));
  call.emit('data', request({}));
  assert.equal(call.written.length, 1, 'a small push is written in the same turn');
  call.emit('data', request({ responseNonce: '1' }));

  current = prepare(padded(1), current);
  stream.onSnapshot();
  const sync = call.written.length;
  const total = () => call.written.length - 1;
  // Every chunk is planned and marked sent at once: its nonce is taken, so an ACK may name it.
  let turns = 0;
  let before = call.written.length;
  while (turns < 1000) {
    await turn();
    turns += 1;
    if (call.written.length === before) break;
    assert.equal(call.written.length, before + 1, 'one response per turn');
    before = call.written.length;
  }
  const responses = call.written.slice(1).map((bytes) => decodeDeltaResponse(bytes));
  assert.ok(total() > 5, `several chunks, got ${total()}`);
  assert.ok(sync - 1 < total(), `not everything in the publishing turn (${sync - 1} of ${total()})`);
  assert.deepEqual(
    responses.map((r) => Number(r.nonce)),
    responses.map((_, i) => i + 2),
    'nonces in order',
  );
  assert.deepEqual(
    responses.flatMap((r) => r.resources.map((x) => x.name)),
    names,
    'every resource once, in order; `small` removed after',
  );
  assert.deepEqual(
    responses.flatMap((r) => r.removed_resources),
    ['small'],
  );
  stream.close();
});
