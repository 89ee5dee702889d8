// `portcullis internal-ca`: the derived CA a sidecar Envoy trusts, printed only when the config
// derives one from a fixed shared_secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { runInternalCa } from '../../../src/cmd/internal-ca-command.js';
import { deriveInternalTls } from '../../../src/pki/derived-tls.js';

async function run(
  document: string,
  env: Record<string, string>,
): Promise<{ code: number; out: string; err: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-internal-ca-'));
  try {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, document);
    let out = '';
    let err = '';
    const sink = (append: (text: string) => void): Writable =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          append(chunk.toString());
          done();
        },
      });
    const code = await runInternalCa(
      path,
      env,
      sink((t) => (out += t)),
      sink((t) => (err += t)),
    );
    return { code, out, err };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const CONFIG = 'insecure_server: true\naddress: :8080\ngrpc_address: 127.0.0.1:5443\nroutes: []\n';

test('prints the CA derived from shared_secret for the tls_derive name, and nothing else', async () => {
  const secret = randomBytes(32);
  const result = await run(`${CONFIG}tls_derive: portcullis\n`, { SHARED_SECRET: secret.toString('base64') });
  assert.equal(result.code, 0, result.err);
  assert.equal(result.out, (await deriveInternalTls(secret, 'portcullis')).caPem);
  assert.ok(new X509Certificate(result.out).ca);
});

test('refuses, saying why, without tls_derive or without a fixed shared_secret', async () => {
  const noDerive = await run(CONFIG, { SHARED_SECRET: randomBytes(32).toString('base64') });
  assert.deepEqual([noDerive.code, noDerive.out], [1, '']);
  assert.match(noDerive.err, /tls_derive is not set/);
  const noSecret = await run(`${CONFIG}tls_derive: portcullis\n`, {});
  assert.deepEqual([noSecret.code, noSecret.out], [1, '']);
  assert.match(noSecret.err, /shared_secret is not set/);
  const invalid = await run(`${CONFIG}tls_derive: Not A Name\n`, {});
  assert.equal(invalid.code, 1);
  assert.match(invalid.err, /invalid configuration/);
});
