// Records sealed at rest: values round-trip, the backend holds nothing readable, and a value that
// does not open (another secret, moved to another id or type, tampered, not JSON) is absent and
// logged once per record, without its value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompactEncrypt } from 'jose';
import { hkdfSync } from 'node:crypto';
import { MemoryBackend } from '../../../src/databroker/memory-backend.js';
import { SealedRecords } from '../../../src/databroker/sealed-records.js';
import { recordingLogger } from '../../../src/shared/logger.js';

const SECRET = new Uint8Array(32).fill(1);

function sealed(secret: Uint8Array = SECRET): {
  backend: MemoryBackend;
  records: SealedRecords;
  logger: ReturnType<typeof recordingLogger>;
} {
  const backend = new MemoryBackend();
  const logger = recordingLogger();
  return { backend, records: new SealedRecords(backend, { secret: () => secret, logger }), logger };
}

const warnings = (logger: ReturnType<typeof recordingLogger>): number =>
  logger.records.filter((r) => r.level === 'warn').length;

test('a value round-trips with its version and expiry; the backend holds only a compact JWE', async () => {
  const { backend, records } = sealed();
  const value = { email: 'ada@example.com', n: 1, nested: { list: ['x'] } };
  const { version } = await records.put('session', 's1', value, { ttlMs: 60_000 });
  const read = await records.get<typeof value>('session', 's1');
  assert.deepEqual(read?.value, value);
  assert.equal(read?.version, version);
  assert.ok(read?.expiresAt !== undefined);
  const raw = await backend.get('session', 's1');
  assert.match(raw?.data ?? '', /^[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+$/, 'not a dir compact JWE');
  assert.ok(!(raw?.data ?? '').includes('ada@example.com'));
});

test('a value copied to another id or type does not open: absent, logged once per record', async () => {
  const { backend, records, logger } = sealed();
  await records.put('session', 'victim', { userId: 'ada' });
  const data = (await backend.get('session', 'victim'))?.data ?? '';
  await backend.put('session', 'attacker', data);
  await backend.put('used-once', 'victim', data);
  assert.equal(await records.get('session', 'attacker'), undefined);
  assert.equal(await records.get('used-once', 'victim'), undefined);
  assert.equal(warnings(logger), 2);
  assert.equal(await records.get('session', 'attacker'), undefined);
  assert.equal(warnings(logger), 2, 'the same record was logged twice');
  assert.deepEqual((await records.get('session', 'victim'))?.value, { userId: 'ada' });
  const logged = JSON.stringify(logger.records);
  assert.ok(!logged.includes('ada') && !logged.includes(data), `the log shows the value: ${logged}`);
});

test('another secret, tampered bytes or a sealed non-JSON value read as absent', async () => {
  const { backend, records, logger } = sealed();
  await records.put('session', 's1', { a: 1 });
  const other = new SealedRecords(backend, { secret: () => new Uint8Array(32).fill(2), logger });
  assert.equal(await other.get('session', 's1'), undefined, 'another secret opened it');

  const data = (await backend.get('session', 's1'))?.data ?? '';
  const parts = data.split('.');
  const ciphertext = Buffer.from(parts[3] ?? '', 'base64url');
  ciphertext[0] = (ciphertext[0] ?? 0) ^ 1;
  parts[3] = ciphertext.toString('base64url');
  await backend.put('session', 's2', parts.join('.'));
  assert.equal(await records.get('session', 's2'), undefined, 'tampered bytes opened');

  // Sealed correctly for the record, but not JSON inside.
  const key = new Uint8Array(
    hkdfSync('sha256', SECRET, new Uint8Array(0), 'portcullis databroker records v1', 32),
  );
  const notJson = await new CompactEncrypt(new TextEncoder().encode('{not json'))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', rtype: 'session', rid: 's3' })
    .encrypt(key);
  await backend.put('session', 's3', notJson);
  assert.equal(await records.get('session', 's3'), undefined, 'non-JSON opened');
  await backend.put('session', 's4', 'garbage');
  assert.equal(await records.get('session', 's4'), undefined);
  assert.equal(warnings(logger), 4);
});

test('query returns the records that open and leaves the others out', async () => {
  const { backend, records } = sealed();
  await records.put('session', 'a', { n: 1 });
  await records.put('session', 'b', { n: 2 });
  await backend.put('session', 'bad', 'garbage');
  const found = await records.query<{ n: number }>('session');
  assert.deepEqual(found.map((r) => [r.id, r.value.n]).sort(), [
    ['a', 1],
    ['b', 2],
  ]);
});

test('the key follows the secret: after a change, records sealed before no longer open', async () => {
  const backend = new MemoryBackend();
  let secret = SECRET;
  const records = new SealedRecords(backend, { secret: () => secret, logger: recordingLogger() });
  await records.put('session', 'a', { n: 1 });
  secret = new Uint8Array(32).fill(9);
  assert.equal(await records.get('session', 'a'), undefined);
  await records.put('session', 'b', { n: 2 });
  assert.deepEqual((await records.get('session', 'b'))?.value, { n: 2 });
});
