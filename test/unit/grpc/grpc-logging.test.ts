import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { routeGrpcLogging } from '../../../src/grpc/grpc-logging.js';
import { recordingLogger } from '../../../src/shared/logger.js';

test("grpc-js's own lines go through the logger, an invalid metadata value redacted (not to stderr)", (t) => {
  const log = recordingLogger();
  const written: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  t.after(() => {
    process.stderr.write = original;
    grpc.setLogger(console);
  });
  process.stderr.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  routeGrpcLogging(log, 'info');
  // One stray control character in a credential: grpc-js logs the entry it cannot add.
  grpc.Metadata.fromHttp2Headers({ authorization: 'Bearer SECRET-TOKEN-123\u0001' });
  process.stderr.write = original;
  const line = log.records.find((record) => (record.msg ?? '').includes('metadata'));
  assert.ok(line !== undefined, JSON.stringify(log.records));
  assert.match(line.msg ?? '', /authorization: \[redacted\]/);
  assert.ok(!JSON.stringify(log.records).includes('SECRET-TOKEN-123'));
  assert.ok(!written.join('').includes('SECRET-TOKEN-123'), 'nothing reached stderr');
});
