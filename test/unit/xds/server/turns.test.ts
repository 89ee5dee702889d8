// A large push is written over several turns of the event loop, in order, with the protocol state
// marked at once, and paced by the client's answers (StreamBase.sendQueued): checked on a
// DeltaStream over an in-memory call.
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
import type { StreamPacing } from '../../../../src/xds/server/stream-base.js';
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

/** No pacing by answers: only the turns of the event loop limit the writes. */
const UNPACED: StreamPacing = { maxUnanswered: Infinity, maxUnansweredBytes: Infinity, valveMs: 60_000 };

/** A DeltaStream over a fake call, serving whatever `current` holds. */
function open(pacing: StreamPacing) {
  const box: { current: PreparedSnapshot | undefined } = { current: undefined };
  const call = new FakeCall();
  const stream = new DeltaStream(
    call as unknown as DeltaCall,
    {
      snapshotFor: () => box.current,
      logger: silentLogger,
      metrics: new AdsMetrics(),
      maxMessageBytes: 64 * 1024,
      newStreamId: () => 1,
      emit: () => undefined,
      pacing,
    },
    () => undefined,
  );
  return { box, call, stream };
}

const names = Array.from({ length: 2000 }, (_, i) => `cluster-${String(i).padStart(4, '0')}`);
const padded = (generation: number) =>
  buildSnapshot({
    clusters: names.map((name) => cluster(name, { alt_stat_name: `${generation}`.repeat(300) })),
  });

/** Runs turns of the event loop until one writes nothing (bounded). */
async function settle(call: FakeCall): Promise<void> {
  for (let turns = 0; turns < 1000; turns += 1) {
    const before: number = call.written.length;
    await turn();
    if (call.written.length === before) return;
  }
  throw new Error('writes did not settle in 1000 turns');
}

const nonceOf = (bytes: Uint8Array | undefined): string => {
  assert.ok(bytes !== undefined);
  return decodeDeltaResponse(bytes).nonce;
};

test('a large push waits for answers: at most maxUnanswered written, more as ACKs come, in order', async () => {
  const { box, call, stream } = open({
    maxUnanswered: 2,
    maxUnansweredBytes: 4 * 1024 * 1024,
    valveMs: 60_000,
  });
  box.current = prepare(buildSnapshot({ clusters: [cluster('small')] }));
  call.emit('data', request({}));
  assert.equal(call.written.length, 1, 'a small push is written in the same turn');
  call.emit('data', request({ responseNonce: '1' }));

  box.current = prepare(padded(1), box.current);
  stream.onSnapshot();
  await settle(call);
  assert.equal(call.written.length - 1, 2, 'two responses written before any answer');
  // An ACK of the first: one more goes. A stale answer (an older nonce) frees nothing.
  call.emit('data', request({ responseNonce: nonceOf(call.written[1]) }));
  await settle(call);
  assert.equal(call.written.length - 1, 3);
  call.emit('data', request({ responseNonce: '1' }));
  await settle(call);
  assert.equal(call.written.length - 1, 3, 'an answer to an earlier response frees nothing');
  // An answer to the latest answers everything before it: two more.
  let rounds = 0;
  for (; rounds < 100; rounds += 1) {
    const before: number = call.written.length;
    call.emit('data', request({ responseNonce: nonceOf(call.written.at(-1)) }));
    await settle(call);
    if (call.written.length === before) break;
    assert.ok(call.written.length - before <= 2, 'never more than two unanswered');
  }
  const responses = call.written.slice(1).map((bytes) => decodeDeltaResponse(bytes));
  assert.ok(responses.length > 5, `several chunks, got ${responses.length}`);
  assert.deepEqual(
    responses.map((r) => Number(r.nonce)),
    responses.map((_, i) => i + 2),
    'nonces in order',
  );
  assert.deepEqual(
    responses.flatMap((r) => r.resources.map((x) => x.name)),
    names,
  );
  assert.deepEqual(
    responses.flatMap((r) => r.removed_resources),
    ['small'],
  );
  stream.close();
});

test('the unanswered bytes bound: chunks of a large push go one at a time', async () => {
  const { box, call, stream } = open({ maxUnanswered: 100, maxUnansweredBytes: 96 * 1024, valveMs: 60_000 });
  box.current = prepare(padded(1));
  call.emit('data', request({}));
  let rounds = 0;
  for (; rounds < 100; rounds += 1) {
    await settle(call);
    const chunk = call.written.at(-1);
    assert.ok(chunk !== undefined);
    const before: number = call.written.length;
    call.emit('data', request({ responseNonce: nonceOf(chunk) }));
    await settle(call);
    if (call.written.length === before) break;
    const sent = call.written.slice(before);
    const bytes = sent.reduce((sum, b) => sum + b.length, 0);
    assert.ok(sent.length === 1 || bytes <= 96 * 1024, `within the bound: ${sent.length}, ${bytes} B`);
  }
  assert.ok(rounds > 5, `several chunks, one at a time (${rounds})`);
  assert.deepEqual(
    call.written.flatMap((bytes) => decodeDeltaResponse(bytes).resources.map((x) => x.name)),
    names,
  );
  stream.close();
});

test('without answers, the next response goes after valveMs; a closed stream drops its queue', async () => {
  // Long enough that the first writes settle well before it (a few turns of the loop).
  const valveMs = 400;
  const { box, call, stream } = open({ maxUnanswered: 2, maxUnansweredBytes: 4 * 1024 * 1024, valveMs });
  box.current = prepare(padded(1));
  const started = Date.now();
  call.emit('data', request({}));
  await settle(call);
  assert.equal(call.written.length, 2, 'two written, then waiting');
  const deadline = Date.now() + 5_000;
  while (call.written.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.equal(call.written.length, 3, 'the valve let one more go');
  assert.ok(Date.now() - started >= valveMs, 'not before valveMs');
  stream.close();
  const closedAt = call.written.length;
  await new Promise((r) => setTimeout(r, valveMs * 2));
  assert.equal(call.written.length, closedAt, 'nothing written after close');
});

test('a push past 256 KiB goes out over several turns, in order; a small one at once', async () => {
  const { box, call, stream } = open(UNPACED);
  box.current = prepare(buildSnapshot({ clusters: [cluster('small')] }));
  call.emit('data', request({}));
  assert.equal(call.written.length, 1, 'a small push is written in the same turn');
  call.emit('data', request({ responseNonce: '1' }));

  box.current = prepare(padded(1), box.current);
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
    // A turn writes its first response whatever its size, more only within 256 KiB.
    const bytes = call.written.slice(before).reduce((sum, b) => sum + b.length, 0);
    assert.ok(bytes <= 256 * 1024 || call.written.length === before + 1, 'about 256 KiB per turn');
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
