// The `portcullis` command as a user runs it: dry-run output, errors as messages with key paths
// (never stack traces), and a clear instruction when no Envoy can be found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generateTestCertificate } from '../support/test-certs.js';
import { freePort, freePortPair } from '../support/ports.js';
import { SIGN_IN_YAML } from '../support/sign-in-config.js';
import { waitFor } from '../support/wait.js';

const bin = new URL('../../bin/portcullis.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'portcullis-cli-'));

function portcullis(
  args: string[],
  env: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function configFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('compile prints every xDS resource as YAML, with private keys redacted', () => {
  const cert = generateTestCertificate('app.example.com');
  const path = configFile(
    'tls.yaml',
    `address: :8443\ncertificate_file: ${cert.certFile}\ncertificate_key_file: ${cert.keyFile}\n${SIGN_IN_YAML}routes:\n  - from: https://app.example.com\n    to: http://10.0.0.1:8080\n`,
  );
  const result = portcullis(['compile', '-config', path]);
  assert.equal(result.status, 0, result.stderr);
  const output = parse(result.stdout) as Record<string, unknown[]>;
  assert.equal(output.listeners?.length, 1);
  assert.equal(output.clusters?.length, 3, 'the route cluster, portcullis-authorize and portcullis-http');
  assert.equal(output.endpoints?.length, 1);
  assert.equal(output.scopes?.length, 2, 'one exact host and the authenticate host: two scopes');
  assert.equal(output.routes?.length, 2, 'the RouteConfigurations those scopes name');
  assert.ok(!result.stdout.includes('PRIVATE KEY'), 'the private key is not printed');
  assert.ok(result.stdout.includes('[redacted]'));
});

test('an invalid config is reported with key paths and lines, exit 1, no stack trace', () => {
  const path = configFile(
    'bad.yaml',
    'insecure_server: true\nroutes:\n  - from: https://a.example.com/x\n    to: http://10.0.0.1,0\n',
  );
  const result = portcullis(['compile', '--config', path]);
  assert.equal(result.status, 1);
  assert.match(
    result.stderr,
    /routes\[0\]\.from: config: policy source url \(https:\/\/a\.example\.com\/x\) contains a path/,
  );
  assert.match(result.stderr, /routes\[0\]\.to: zero load balancing weight not permitted/);
  assert.match(result.stderr, /\(line 3\)/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

test('running without any Envoy says how to get one, exit 1, no stack trace', () => {
  const path = configFile(
    'ok.yaml',
    'insecure_server: true\naddress: 127.0.0.1:18481\ngrpc_address: 127.0.0.1:18482\nroutes: []\n',
  );
  const result = portcullis(['--config', path], { ENVOY_BIN: join(dir, 'no-such-envoy') });
  assert.equal(result.status, 1);
  assert.match(result.stderr, /ENVOY_BIN/);
  assert.match(result.stderr, /npm run setup/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

test('a missing --config is a usage error that says what to pass', () => {
  const result = portcullis([]);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /--config/);
});

test('the bundled example configs are valid', () => {
  for (const example of ['examples/all-in-one.yaml', 'examples/sidecar.yaml', 'examples/demo.yaml']) {
    const result = portcullis([
      'validate',
      '--config',
      new URL(`../../${example}`, import.meta.url).pathname,
    ]);
    assert.equal(result.status, 0, `${example}: ${result.stderr}`);
  }
});

test('all-in-one says what is listening and when Envoy is ready, and stops cleanly on SIGTERM', async () => {
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  const config = configFile(
    'ready.yaml',
    [
      'insecure_server: true',
      `address: 127.0.0.1:${proxyPort}`,
      `grpc_address: 127.0.0.1:${grpcPort}`,
      `envoy_admin_address: 127.0.0.1:${adminPort}`,
      'routes:',
      '  - from: https://ready.test',
      '    to: http://127.0.0.1:9',
      '    allow_public_unauthenticated_access: true',
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [bin, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor(async () => output.includes('ready: Envoy is serving routes'), {
      what: 'the ready line',
      timeoutMs: 30_000,
    });
    assert.ok(
      output.includes(`Envoy listening on http://127.0.0.1:${proxyPort}`),
      'the listener URL is logged',
    );
    assert.ok(
      output.indexOf(`Envoy listening on http://127.0.0.1:${proxyPort}`) < output.indexOf('ready: Envoy'),
      'the listener line comes before the ready line',
    );
    assert.ok(!output.includes('"args"'), "Envoy's argv is not logged at info");
    assert.ok(output.includes(`"grpc_address":"127.0.0.1:${grpcPort}"`), 'the gRPC address is logged');
    assert.ok(output.includes('Envoy started'));
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output.slice(-2000));
});
