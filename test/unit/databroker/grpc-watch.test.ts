// The databroker's change feed over gRPC and the client's behaviour when the databroker goes away:
// one Watch stream per client, `resumed` once it is live, puts and deletes of any client in order,
// `lost` when the stream breaks (the store's feed lost, the databroker closing or killed) and
// `resumed` once it is back; a databroker that is down fails every call within its deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { methodPath } from '../../../src/databroker/grpc/messages.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import {
  StoreUnavailableError,
  type RecordBackend,
  type RecordChange,
} from '../../../src/session/records.js';
import {
  TEST_INTERNAL_TOKEN,
  startTestDatabroker,
  testDatabrokerClient,
} from '../../support/databroker-grpc.js';
import { waitFor } from '../../support/wait.js';
import { ControlledBackend } from './controlled-backend.js';

/** Watches `backend`, keeping every change heard. */
function record(backend: RecordBackend): { changes: RecordChange[]; stop: () => void } {
  const changes: RecordChange[] = [];
  const stop = backend.watch((change) => changes.push(change));
  return { changes, stop };
}

const kinds = (changes: readonly RecordChange[]): string[] =>
  changes.map((c) => (c.kind === 'put' || c.kind === 'delete' ? `${c.kind} ${c.type}/${c.id}` : c.kind));

/** Waits until `changes` holds `count` events of `kind` (bounded). */
const heard = (changes: readonly RecordChange[], kind: string, count = 1): Promise<true> =>
  waitFor(async () => changes.filter((c) => c.kind === kind).length >= count, {
    what: `${count} '${kind}' change(s) (heard: ${kinds(changes).join(', ')})`,
    timeoutMs: 5_000,
    intervalMs: 10,
  });

test('a second client hears every put and delete of the first, in order, once its stream is live', async (t) => {
  const store = new MemoryBackend();
  const databroker = await startTestDatabroker(store);
  const writer = testDatabrokerClient(databroker.address);
  const reader = testDatabrokerClient(databroker.address);
  t.after(async () => {
    await Promise.all([writer.close(), reader.close()]);
    databroker.kill();
  });
  const { changes } = record(reader);
  await heard(changes, 'resumed');
  const first = await writer.put('session', 's1', 'v1');
  const second = await writer.put('session', 's1', 'v2');
  await writer.delete('session', 's1');
  await writer.put('used-once', 'state', '', { ifVersion: 0 });
  await heard(changes, 'put', 3);
  assert.deepEqual(kinds(changes), [
    'resumed',
    'put session/s1',
    'put session/s1',
    'delete session/s1',
    'put used-once/state',
  ]);
  assert.deepEqual(
    changes.slice(1, 3).map((c) => (c.kind === 'put' ? c.version : 0)),
    [first.version, second.version],
  );
});

test("the store's feed lost ends the stream: lost, then resumed once the store answers again", async (t) => {
  const store = new ControlledBackend(new MemoryBackend());
  const databroker = await startTestDatabroker(store);
  const client = testDatabrokerClient(databroker.address);
  t.after(async () => {
    await client.close();
    databroker.kill();
  });
  const { changes } = record(client);
  await heard(changes, 'resumed');
  store.down = true;
  store.emit({ kind: 'lost' });
  await heard(changes, 'lost');
  // Reconnects while the store is down are refused (the databroker's ping of it fails): no `resumed`.
  let pings = 0;
  const ping = store.ping.bind(store);
  store.ping = () => {
    pings += 1;
    return ping();
  };
  await waitFor(async () => pings >= 3, { what: 'three Watch attempts while the store is down' });
  assert.deepEqual(kinds(changes), ['resumed', 'lost']);
  store.down = false;
  await heard(changes, 'resumed', 2);
  await store.inner.put('session', 'after', 'v');
  await heard(changes, 'put');
  assert.deepEqual(kinds(changes), ['resumed', 'lost', 'resumed', 'put session/after']);
});

test('a databroker killed and restarted on its port: lost, then resumed, then changes again', async (t) => {
  const store = new MemoryBackend();
  let databroker = await startTestDatabroker(store);
  const client = testDatabrokerClient(databroker.address);
  t.after(async () => {
    await client.close();
    databroker.kill();
  });
  const { changes } = record(client);
  await heard(changes, 'resumed');
  databroker.kill();
  await heard(changes, 'lost');
  await assert.rejects(client.get('session', 'x'), StoreUnavailableError);
  databroker = await startTestDatabroker(store, { port: databroker.port });
  await heard(changes, 'resumed', 2);
  await client.put('session', 'back', 'v');
  await heard(changes, 'put');
  assert.deepEqual(kinds(changes), ['resumed', 'lost', 'resumed', 'put session/back']);
});

test('closing the service ends its Watch streams; clients reconnect', async (t) => {
  const store = new MemoryBackend();
  const databroker = await startTestDatabroker(store);
  const client = testDatabrokerClient(databroker.address);
  t.after(async () => {
    await client.close();
    databroker.kill();
  });
  const { changes, stop } = record(client);
  await heard(changes, 'resumed');
  databroker.service.close();
  await heard(changes, 'lost');
  await heard(changes, 'resumed', 2);
  stop();
  await store.put('session', 'unheard', 'v');
  await client.ping();
  assert.deepEqual(kinds(changes), ['resumed', 'lost', 'resumed'], 'nothing after unsubscribing');
});

test('a databroker that is down: every call rejects with StoreUnavailableError within its deadline', async (t) => {
  const store = new MemoryBackend();
  const databroker = await startTestDatabroker(store);
  const client = testDatabrokerClient(databroker.address, { timeoutMs: 400, readTimeoutMs: 200 });
  t.after(async () => client.close());
  await client.ping();
  const { changes } = record(client);
  await heard(changes, 'resumed');
  databroker.kill();
  await heard(changes, 'lost');
  const calls: [string, () => Promise<unknown>][] = [
    ['get', () => client.get('session', 'a')],
    ['put', () => client.put('session', 'a', 'v')],
    ['delete', () => client.delete('session', 'a')],
    ['query', () => client.query('session')],
    ['acquireLease', () => client.acquireLease('l', 1000)],
    ['releaseLease', () => client.releaseLease('l', 't')],
    ['ping', () => client.ping()],
  ];
  for (const [name, call] of calls) {
    const started = Date.now();
    await assert.rejects(
      call(),
      (err: unknown) => err instanceof StoreUnavailableError && err.message.includes(databroker.address),
      name,
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 400 + 200, `${name} rejected after ${elapsed} ms`);
  }
  // Nothing queues: 500 calls at once all reject together. Queued one behind another they would
  // take 500 times a deadline; the bound (two deadlines) leaves room for a loaded machine.
  const started = Date.now();
  const results = await Promise.allSettled(
    Array.from({ length: 500 }, (_, i) => client.get('session', `${i}`)),
  );
  assert.ok(results.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError));
  assert.ok(Date.now() - started < 2 * (400 + 200), `500 calls rejected in ${Date.now() - started} ms`);
  await store.close();
});

test('an address where nothing listens fails fast, and the feed reports lost', async (t) => {
  const databroker = await startTestDatabroker(new MemoryBackend());
  databroker.kill();
  const client = testDatabrokerClient(databroker.address, { timeoutMs: 300 });
  t.after(async () => client.close());
  const started = Date.now();
  await assert.rejects(client.ping(), StoreUnavailableError);
  assert.ok(Date.now() - started < 300 + 200);
  const { changes } = record(client);
  await heard(changes, 'lost');
  assert.deepEqual(kinds(changes), ['lost'], 'lost once, not once per reconnect attempt');
});

test('a Watch reader that stops reading is cut off (RESOURCE_EXHAUSTED), never buffered without bound', async (t) => {
  const store = new MemoryBackend();
  const logger = recordingLogger();
  const databroker = await startTestDatabroker(store, { maxPendingEvents: 50, logger });
  const raw = new grpc.Client(databroker.address, grpc.credentials.createInsecure());
  t.after(() => {
    raw.close();
    databroker.kill();
  });
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${TEST_INTERNAL_TOKEN}`);
  // No 'data' listener: the stream stays paused, so nothing is read past HTTP/2's windows.
  const stream = raw.makeServerStreamRequest(
    methodPath('Watch'),
    () => Buffer.alloc(0),
    (b: Buffer) => b,
    {},
    metadata,
  );
  const status = new Promise<grpc.StatusObject>((resolve) => {
    stream.on('error', () => {});
    stream.on('status', resolve);
  });
  const id = 'x'.repeat(250);
  let written = 0;
  await waitFor(
    async () => {
      for (let i = 0; i < 500; i += 1) await store.put('session', `${id}${written++ % 5}`, '');
      return logger.records.some((r) => /too slow/.test(r.msg ?? ''));
    },
    { what: 'the databroker to give up on the slow reader', timeoutMs: 20_000, intervalMs: 0 },
  );
  stream.resume();
  assert.equal((await status).code, grpc.status.RESOURCE_EXHAUSTED);
  t.diagnostic(`cut off after ${written} changes`);
});
