// `portcullis compile` shows the fast path: with decision_token_lifetime above 0 the listener's
// jwt_authn and shadow RBAC filters, and the shadow RBAC's ECDS resource under `filters` (as served
// with no session revoked); with 0 neither.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { parse } from 'yaml';
import { runCompile } from '../../../src/cmd/compile-command.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function dryRun(settings: Record<string, unknown>): Promise<Json> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-compile-command-'));
  try {
    const path = join(dir, 'config.yaml');
    writeFileSync(
      path,
      JSON.stringify({
        ...SIGN_IN,
        insecure_server: true,
        address: '127.0.0.1:8080',
        routes: [{ from: 'https://app.test', to: 'http://10.0.0.1:8080', allowed_domains: ['example.com'] }],
        ...settings,
      }),
    );
    const out = new PassThrough();
    const err = new PassThrough();
    assert.equal(await runCompile(path, out, err, {}), 0, String(err.read()));
    return parse(String(out.read())) as Json;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const filterNames = (output: Json): string[] =>
  (output.listeners[0].filter_chains[0].filters[0].typed_config.http_filters as Json[]).map((filter) =>
    String(filter.name),
  );

test('the dry run shows the fast-path filters and their ECDS resource', async () => {
  const output = await dryRun({});
  assert.ok(filterNames(output).includes('envoy.filters.http.jwt_authn'));
  assert.ok(filterNames(output).includes('portcullis.fast_path'));
  assert.equal(output.filters.length, 1);
  assert.equal(output.filters[0].name, 'portcullis.fast_path');
  assert.equal(
    output.filters[0].typed_config['@type'],
    'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
  );
  assert.ok(output.filters[0].typed_config.shadow_matcher, 'the shadow matcher as Envoy receives it');
});

test('with decision_token_lifetime 0 the dry run shows neither', async () => {
  const output = await dryRun({ decision_token_lifetime: '0s' });
  assert.ok(!filterNames(output).includes('envoy.filters.http.jwt_authn'));
  assert.ok(!filterNames(output).includes('portcullis.fast_path'));
  assert.deepEqual(output.filters, []);
});
