// The databroker over gRPC: a client (a RecordBackend) -> the Databroker service -> a MemoryBackend,
// over loopback. Every method round-trips; errors map both ways (StoreUnavailableError <->
// UNAVAILABLE, RecordConflictError <-> ABORTED, bad arguments <-> INVALID_ARGUMENT naming the
// field, anything else INTERNAL without its message); a call without the internal token is refused
// UNAUTHENTICATED before the backend sees it; deadlines bound every call.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import { createDatabrokerCodec, methodPath } from '../../../src/databroker/grpc/messages.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import {
  RecordConflictError,
  StoreUnavailableError,
  type RecordBackend,
} from '../../../src/session/records.js';
import {
  bearerCallCredentials,
  startTestDatabroker,
  testDatabrokerClient,
  type TestDatabroker,
} from '../../support/databroker-grpc.js';
import { ControlledBackend } from './controlled-backend.js';

const logger = recordingLogger();
const store = new ControlledBackend(new MemoryBackend());
let databroker: TestDatabroker;
let client: RecordBackend;

before(async () => {
  databroker = await startTestDatabroker(store, { logger });
  client = testDatabrokerClient(databroker.address);
});

after(async () => {
  await client.close();
  databroker.kill();
  await store.close();
});

test('get, put, delete and query round-trip with versions, expiry and optimistic writes', async () => {
  assert.equal(await client.get('session', 'a'), undefined);
  const first = await client.put('session', 'a', 'sealed-1');
  assert.deepEqual(
    { ...first, version: 0 },
    { type: 'session', id: 'a', version: 0, data: 'sealed-1', expiresAt: undefined },
  );
  assert.ok(first.version > 0);
  assert.deepEqual(await client.get('session', 'a'), first);

  const before = Date.now();
  const second = await client.put('session', 'a', 'sealed-2', { ttlMs: 60_000, ifVersion: first.version });
  assert.ok(second.version > first.version, 'a newer write has a larger version');
  assert.ok(second.expiresAt !== undefined && second.expiresAt >= before + 60_000, 'expiry travels');
  assert.deepEqual(await client.get('session', 'a'), second);

  await assert.rejects(
    client.put('session', 'a', 'stale', { ifVersion: first.version }),
    RecordConflictError,
  );
  await assert.rejects(client.put('session', 'a', 'again', { ifVersion: 0 }), RecordConflictError);
  assert.equal((await client.get('session', 'a'))?.data, 'sealed-2', 'a conflict writes nothing');
  const claimed = await client.put('used-once', 'state-1', '', { ifVersion: 0 });
  assert.equal(claimed.data, '', 'ifVersion 0 claims an absent id (empty data round-trips)');

  await client.put('session', 'b', 'sealed-b');
  await client.put('other', 'c', 'sealed-c');
  const all = await client.query('session');
  assert.deepEqual(all.map((r) => r.id).sort(), ['a', 'b']);
  assert.equal((await client.query('session', { limit: 1 })).length, 1);

  assert.equal(await client.delete('session', 'a'), true);
  assert.equal(await client.delete('session', 'a'), false);
  assert.equal(await client.get('session', 'a'), undefined);
});

test('leases: taken once, refused while held, released only by their token', async () => {
  const token = await client.acquireLease('refresh:s1', 10_000);
  assert.equal(typeof token, 'string');
  assert.equal(await client.acquireLease('refresh:s1', 10_000), undefined, 'held by another');
  await client.releaseLease('refresh:s1', 'not-the-token');
  assert.equal(await client.acquireLease('refresh:s1', 10_000), undefined, 'a wrong token releases nothing');
  await client.releaseLease('refresh:s1', token ?? '');
  assert.equal(typeof (await client.acquireLease('refresh:s1', 10_000)), 'string');
  await client.ping();
});

test('bad arguments answer INVALID_ARGUMENT, which the client throws as a RangeError naming the field', async () => {
  const refused = async (promise: Promise<unknown>, field: RegExp): Promise<void> => {
    await assert.rejects(promise, (err: unknown) => err instanceof RangeError && field.test(err.message));
  };
  await refused(client.get('', 'a'), /type is required/);
  await refused(client.get('session', 'x'.repeat(257)), /id is longer than 256/);
  await refused(client.put('session', 'a\u0000b', 'd'), /id contains a control character/);
  await refused(
    client.put('session', 'big', 'x'.repeat(1024 * 1024 + 1)),
    /data is larger than 1048576 bytes/,
  );
  await refused(client.put('session', 'a', 'd', { ttlMs: 0 }), /ttl_ms must be/);
  await refused(client.query('session', { limit: 0 }), /limit must be an integer from 1 to 10000/);
  await refused(client.query('session', { limit: 10_001 }), /limit/);
  await refused(client.acquireLease('', 1000), /name is required/);
  await refused(client.acquireLease('lease', 0), /ttl_ms/);
  assert.equal(await client.get('session', 'big'), undefined, 'nothing was written');
  const exactly = await client.put('session', 'big', 'x'.repeat(1024 * 1024));
  assert.equal(exactly.data.length, 1024 * 1024, '1 MiB itself is accepted');
  await client.delete('session', 'big');
});

test('store errors map to StoreUnavailableError naming the databroker; unexpected ones send no detail', async (t) => {
  store.down = true;
  t.after(() => {
    store.down = false;
  });
  await assert.rejects(
    client.get('session', 'a'),
    (err: unknown) =>
      err instanceof StoreUnavailableError &&
      err.message.includes(databroker.address) &&
      err.message.includes('the test store is down'),
  );
  await assert.rejects(client.ping(), StoreUnavailableError);
  store.down = false;

  const broken: RecordBackend = Object.create(store, {
    get: { value: () => Promise.reject(new Error('secret internals at /srv/x.js:12')) },
  });
  const brokenLogger = recordingLogger();
  const other = await startTestDatabroker(broken, { logger: brokenLogger });
  const otherClient = testDatabrokerClient(other.address);
  t.after(async () => {
    await otherClient.close();
    other.kill();
  });
  await assert.rejects(
    otherClient.get('session', 'a'),
    (err: unknown) =>
      err instanceof StoreUnavailableError && /INTERNAL/.test(err.message) && !err.message.includes('secret'),
  );
  assert.ok(
    brokenLogger.records.some(
      (r) => r.level === 'error' && JSON.stringify(r.obj).includes('secret internals'),
    ),
    'the databroker logs what went wrong',
  );
});

test('a call without a valid internal token is refused UNAUTHENTICATED before the backend sees it', async () => {
  const wrong = testDatabrokerClient(databroker.address, { callCredentials: bearerCallCredentials('wrong') });
  await client.put('session', 'kept', 'v1');
  await assert.rejects(
    wrong.put('session', 'kept', 'overwritten'),
    (err: unknown) => err instanceof StoreUnavailableError && /refused our internal token/.test(err.message),
  );
  assert.equal((await client.get('session', 'kept'))?.data, 'v1', 'the refused put wrote nothing');
  await wrong.close();

  // A raw client without any metadata: the status itself, for a unary call and for Watch.
  const codec = createDatabrokerCodec();
  const raw = new grpc.Client(databroker.address, grpc.credentials.createInsecure());
  const status = await new Promise<grpc.ServiceError | null>((resolve) =>
    raw.makeUnaryRequest(
      methodPath('Get'),
      (m: object) => Buffer.from(codec.encode('GetRequest', m as { type: string; id: string })),
      (b: Buffer) => b,
      { type: 'session', id: 'kept' },
      (err) => resolve(err),
    ),
  );
  assert.equal(status?.code, grpc.status.UNAUTHENTICATED);
  const watch = raw.makeServerStreamRequest(
    methodPath('Watch'),
    () => Buffer.alloc(0),
    (b: Buffer) => b,
    {},
  );
  const received: Buffer[] = [];
  watch.on('data', (b: Buffer) => received.push(b));
  const watchStatus = await new Promise<grpc.StatusObject>((resolve) => {
    watch.on('error', () => {});
    watch.on('status', resolve);
  });
  assert.equal(watchStatus.code, grpc.status.UNAUTHENTICATED);
  assert.equal(received.length, 0, 'a refused Watch sends nothing');
  raw.close();
  assert.ok(logger.records.some((r) => r.level === 'warn' && /UNAUTHENTICATED/.test(r.msg ?? '')));
});

test('a slow store: get gives up after readTimeoutMs, with StoreUnavailableError', async (t) => {
  const fast = testDatabrokerClient(databroker.address, { readTimeoutMs: 150 });
  store.hold();
  t.after(async () => {
    store.release();
    await fast.close();
  });
  const started = Date.now();
  await assert.rejects(
    fast.get('session', 'kept'),
    (err: unknown) => err instanceof StoreUnavailableError && /no answer within 150 ms/.test(err.message),
  );
  // The store holds the call forever, so without the read timeout this would never end; the bound
  // leaves room for a loaded machine.
  const elapsed = Date.now() - started;
  assert.ok(elapsed < 5_000, `gave up after ${elapsed} ms`);
});

test('a closed client rejects every call', async () => {
  const closing = testDatabrokerClient(databroker.address);
  await closing.ping();
  await closing.close();
  await assert.rejects(closing.get('session', 'a'), StoreUnavailableError);
});
