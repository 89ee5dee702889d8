// `portcullis tcp --listen -` as a separate process, the way SSH runs a ProxyCommand: bytes on its
// stdin reach the target through the tunnel and the target's bytes come back on its stdout,
// interactively (an answer arrives before stdin is closed); a refusal is one stderr line and a
// non-zero exit, never a stack trace. The stand-in for Envoy is the fake CONNECT server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEchoServer, startFakePortcullis } from '../../support/fake-connect-server.js';
import type { FakePortcullis } from '../../support/fake-connect-server.js';
import { generateTestCertificate } from '../../support/test-certs.js';
import type { TestCertificate } from '../../support/test-certs.js';

const ROUTE = 'ssh.example.test';
const TARGET = `${ROUTE}:22`;
const root = new URL('../../..', import.meta.url).pathname;

describe('portcullis tcp --listen - in a child process', () => {
  let cert: TestCertificate;
  let fake: FakePortcullis;
  let echo: Awaited<ReturnType<typeof startEchoServer>>;
  let configHome: string;

  before(async () => {
    cert = generateTestCertificate(ROUTE);
    fake = await startFakePortcullis(cert.certPem, cert.keyPem);
    echo = await startEchoServer();
    fake.upstreams.set(TARGET, echo.port);
    fake.validTokens.add('child-token');
    configHome = mkdtempSync(join(tmpdir(), 'portcullis-child-'));
    mkdirSync(join(configHome, 'portcullis'), { mode: 0o700 });
    writeFileSync(
      join(configHome, 'portcullis', 'tokens.json'),
      JSON.stringify({
        version: 1,
        tokens: { [ROUTE]: { token: 'child-token', saved_at: '2026-01-01T00:00:00Z' } },
      }),
      { mode: 0o600 },
    );
  });
  after(async () => {
    await fake.close();
    echo.server.close();
    rmSync(configHome, { recursive: true, force: true });
  });

  function client(): ReturnType<typeof spawn> {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cmd/main.ts',
        'tcp',
        TARGET,
        '--listen',
        '-',
        '--via',
        `https://127.0.0.1:${fake.port}`,
        '--ca-cert',
        cert.certFile,
        '--no-browser',
      ],
      {
        cwd: root,
        env: { PATH: process.env.PATH, HOME: configHome, XDG_CONFIG_HOME: configHome },
        stdio: 'pipe',
      },
    );
    return child;
  }

  test('bytes go both ways interactively; closing stdin ends the tunnel and the process exits 0', async () => {
    const child = client();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin?.write('SSH-2.0-test\r\n');
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`the client exited (${String(code)}) before answering: ${stderr}`);
    });
    const [first] = (await Promise.race([once(child.stdout!, 'data'), exited])) as [Buffer];
    exited.catch(() => undefined);
    assert.equal(first.toString(), 'SSH-2.0-test\r\n', 'the answer came back before stdin closed');
    const rest: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => rest.push(chunk));
    child.stdin?.end('bye');
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 0, stderr);
    assert.equal(Buffer.concat(rest).toString(), 'bye');
    assert.equal(stderr, '');
  });

  test('a denied CONNECT is one stderr line and exit code 1, without a stack trace', async (t) => {
    fake.denied.add(TARGET);
    t.after(() => fake.denied.delete(TARGET));
    const child = client();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdin?.end();
    const [code] = (await once(child, 'exit')) as [number];
    assert.equal(code, 1);
    assert.match(stderr, /^portcullis: access to ssh\.example\.test:22 was denied \(403\): [^\n]+\n$/);
  });
});
