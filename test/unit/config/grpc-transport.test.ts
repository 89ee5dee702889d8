import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';

// Without tls_derive the gRPC port has no TLS: off loopback, the credential and every resource
// (private keys included) would cross the network in the clear, so it takes tls_derive (TLS from
// shared_secret) or an explicit grpc_insecure: true.
const base = { insecure_server: true };

function problemsFor(document: Record<string, unknown>, env: Record<string, string> = {}): string[] {
  const result = parseConfig({ document: { ...base, ...document }, env, readText: () => '' });
  return result.problems.map((problem) => `${problem.path}: ${problem.message}`);
}

test('grpc_address on loopback needs nothing more', () => {
  for (const address of ['127.0.0.1:5443', '127.1.2.3:5443', '[::1]:5443', 'localhost:5443']) {
    assert.deepEqual(problemsFor({ grpc_address: address }), [], address);
  }
  assert.deepEqual(problemsFor({}), [], 'the default is loopback');
});

test('grpc_address off loopback without TLS is an error naming the key, the fix and the missing TLS', () => {
  for (const address of ['0.0.0.0:5443', ':5443', '10.0.0.5:5443', '[::]:5443', 'portcullis:5443']) {
    const problems = problemsFor({ grpc_address: address });
    assert.equal(problems.length, 1, `${address}: ${problems.join('; ')}`);
    const [problem = ''] = problems;
    assert.match(problem, /^grpc_address: /);
    assert.match(problem, /not loopback/);
    assert.match(problem, /grpc_insecure: true/);
    assert.match(problem, /has no TLS/);
    assert.match(problem, /set tls_derive/);
  }
  const fromEnv = problemsFor({}, { GRPC_ADDRESS: '0.0.0.0:5443' });
  assert.equal(fromEnv.length, 1);
  assert.match(fromEnv[0] ?? '', /^GRPC_ADDRESS: /, 'names the variable the value came from');
});

test('grpc_insecure: true allows it explicitly, in the file or the environment', () => {
  assert.deepEqual(problemsFor({ grpc_address: '0.0.0.0:5443', grpc_insecure: true }), []);
  assert.deepEqual(problemsFor({ grpc_address: '0.0.0.0:5443' }, { GRPC_INSECURE: 'true' }), []);
  const result = parseConfig({
    document: { ...base, grpc_address: '0.0.0.0:5443', grpc_insecure: true },
    env: {},
    readText: () => '',
  });
  assert.equal(result.config?.grpc_insecure, true);
  assert.equal(parseConfig({ document: base, env: {}, readText: () => '' }).config?.grpc_insecure, false);
  assert.equal(problemsFor({ grpc_address: '0.0.0.0:5443', grpc_insecure: false }).length, 1);
});

test('tls_derive serves the gRPC port over TLS, so it may listen off loopback', () => {
  const derive = { tls_derive: 'portcullis.internal', shared_secret: Buffer.alloc(32, 1).toString('base64') };
  for (const address of ['0.0.0.0:5443', ':5443', '10.0.0.5:5443', 'portcullis:5443']) {
    assert.deepEqual(problemsFor({ ...derive, grpc_address: address }), [], address);
  }
  assert.deepEqual(problemsFor({ grpc_address: '0.0.0.0:5443' }, { TLS_DERIVE: 'portcullis.internal' }), []);
});
