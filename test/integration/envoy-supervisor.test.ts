import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { adminRequest } from '../../src/envoy/admin.js';
import { type BootstrapOptions, buildBootstrap } from '../../src/envoy/bootstrap.js';
import { XDS_CLUSTER as XDS_CLUSTER_NAME } from '../../src/contract/names.js';
import { type LocatedEnvoy, findRepoRoot, locateEnvoy } from '../../src/envoy/locate.js';
import { type ExitInfo, EnvoySupervisor, validateBootstrap } from '../../src/envoy/supervisor.js';
import { PortcullisError } from '../../src/shared/errors.js';
import { recordingLogger } from '../../src/shared/logger.js';
import { clusterHealth, startEnvoy } from '../support/envoy.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { addStaticHttpRoute, startSlowUpstream } from './envoy-fixtures.js';
import { TEST_GRPC_CREDENTIAL } from '../support/grpc-credential.js';
import { deriveInternalTls } from '../../src/pki/derived-tls.js';

/** Where envoy/sidecar.yaml expects the derived CA (docker-compose mounts it there). */
const SIDECAR_CA_PATH = '/etc/envoy/portcullis-ca.pem';

const repoRoot = findRepoRoot();
let envoy: LocatedEnvoy;
let deadAdsPort: number;

/** Bootstrap whose ADS cluster points at a port nothing listens on, admin on a random port. */
function isolatedBootstrap(extra: Partial<BootstrapOptions> = {}): ReturnType<typeof buildBootstrap> {
  return buildBootstrap({
    ads: { address: '127.0.0.1', port: deadAdsPort, credential: TEST_GRPC_CREDENTIAL },
    admin: { port: 0 },
    ...extra,
  });
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

before(async () => {
  // No skip: a missing Envoy fails here with the ENVOY_NOT_FOUND message.
  envoy = await locateEnvoy();
  deadAdsPort = await freePort();
});

describe('locateEnvoy', () => {
  test('finds Envoy 1.40.x and does not flag it as outdated', () => {
    assert.match(envoy.version, /^1\.40\.\d+$/);
    assert.equal(envoy.outdated, false);
    assert.ok(existsSync(envoy.path));
  });

  test('ENVOY_BIN at a missing file, empty PATH, fake repo root: ENVOY_NOT_FOUND says what to do', async () => {
    const fakeRoot = await mkdtemp(join(tmpdir(), 'portcullis-fake-repo-'));
    after(() => rm(fakeRoot, { recursive: true, force: true }));
    const check = (err: unknown): boolean => {
      assert.ok(err instanceof PortcullisError);
      assert.equal(err.code, 'ENVOY_NOT_FOUND');
      assert.match(err.message, /npm run setup/);
      assert.match(err.message, /ENVOY_BIN/);
      return true;
    };
    const missing = join(fakeRoot, 'no-such-envoy');
    await assert.rejects(locateEnvoy({ ENVOY_BIN: missing, PATH: '' }, { repoRoot: fakeRoot }), (err) => {
      check(err);
      assert.ok((err as Error).message.includes(missing), 'names the bad ENVOY_BIN');
      return true;
    });
    await assert.rejects(locateEnvoy({ PATH: '' }, { repoRoot: fakeRoot }), check);
  });

  test('search order: ENVOY_BIN, then PATH, then the project copy', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'portcullis-path-'));
    after(() => rm(dir, { recursive: true, force: true }));
    await symlink(envoy.path, join(dir, 'envoy'));
    const fromBin = await locateEnvoy({ ENVOY_BIN: envoy.path, PATH: dir });
    assert.equal(fromBin.source, 'ENVOY_BIN');
    const fromPath = await locateEnvoy({ PATH: dir });
    assert.equal(fromPath.source, 'PATH');
    assert.equal(fromPath.path, join(dir, 'envoy'));
    const fromProject = await locateEnvoy({ PATH: '' }, { repoRoot });
    assert.equal(fromProject.source, 'project');
    // An executable that is not Envoy is never returned.
    const fake = join(dir, 'fake');
    await mkdir(fake);
    await writeFile(join(fake, 'envoy'), '#!/bin/sh\necho nope\nexit 3\n');
    await chmod(join(fake, 'envoy'), 0o755);
    await assert.rejects(
      locateEnvoy({ ENVOY_BIN: join(fake, 'envoy'), PATH: '' }),
      /did not report a version/,
    );
    // An older Envoy is returned but flagged, so callers can warn about missing security fixes.
    const oldEnvoy = join(dir, 'old-envoy');
    await writeFile(oldEnvoy, '#!/bin/sh\necho "envoy  version: abc/1.39.3/Clean/RELEASE/BoringSSL"\n');
    await chmod(oldEnvoy, 0o755);
    const outdated = await locateEnvoy({ ENVOY_BIN: oldEnvoy, PATH: '' });
    assert.deepEqual([outdated.version, outdated.outdated], ['1.39.3', true]);
  });
});

describe('validateBootstrap', () => {
  test('buildBootstrap output (both ADS flavours) and envoy/sidecar.yaml pass envoy --mode validate', async () => {
    for (const adsApiType of ['DELTA_GRPC', 'GRPC'] as const) {
      const result = await validateBootstrap(envoy.path, isolatedBootstrap({ adsApiType }));
      assert.equal(result.ok, true, result.output);
    }
    // The sidecar trusts the derived CA at the path compose mounts it on; here it is a temp file.
    const dir = mkdtempSync(join(tmpdir(), 'sidecar-validate-'));
    try {
      const caFile = join(dir, 'portcullis-ca.pem');
      writeFileSync(caFile, (await deriveInternalTls(randomBytes(32), 'portcullis')).caPem);
      const text = readFileSync(join(repoRoot, 'envoy', 'sidecar.yaml'), 'utf8');
      assert.ok(text.includes(SIDECAR_CA_PATH), `envoy/sidecar.yaml no longer trusts ${SIDECAR_CA_PATH}`);
      const sidecar = parse(text.replaceAll(SIDECAR_CA_PATH, caFile)) as Record<string, unknown>;
      const result = await validateBootstrap(envoy.path, sidecar);
      assert.equal(result.ok, true, result.output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a broken bootstrap is reported, not thrown', async () => {
    const broken = { ...isolatedBootstrap(), overload_manager: { actions: [{ name: 'no.such.action' }] } };
    const result = await validateBootstrap(envoy.path, broken);
    assert.equal(result.ok, false);
    assert.match(result.output, /no\.such\.action|overload/i);
  });
});

describe('EnvoySupervisor', () => {
  test(
    'starts Envoy; without ADS /ready answers 503 PRE_INITIALIZING/INITIALIZING',
    { timeout: 60_000 },
    async () => {
      const logger = recordingLogger();
      const running = await startEnvoy({ bootstrap: isolatedBootstrap(), logger });
      after(() => running.stop());
      const ready = await adminRequest(running.adminUrl, '/ready');
      assert.equal(ready.status, 503);
      assert.match(ready.body.trim(), /^(PRE_INITIALIZING|INITIALIZING)$/);
      assert.match(running.adminUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
      const hosts = await clusterHealth(running.adminUrl, XDS_CLUSTER_NAME);
      assert.deepEqual([...hosts.keys()], [`127.0.0.1:${deadAdsPort}`]);
      assert.ok(logger.records.some((r) => r.msg === 'Envoy started'));
    },
  );

  test(
    'goes LIVE once the initial fetch times out; Envoy warnings reach the logger as warn',
    { timeout: 60_000 },
    async () => {
      const logger = recordingLogger();
      const running = await startEnvoy({
        bootstrap: isolatedBootstrap({ initialFetchTimeout: '0.5s' }),
        logger,
        until: 'live',
      });
      after(() => running.stop());
      assert.equal((await running.admin('/ready')).trim(), 'LIVE');
      const warned = await waitFor(
        async () =>
          logger.records.find((r) => r.level === 'warn' && /initial fetch timed out/.test(r.msg ?? '')),
        { what: 'the initial-fetch warning from Envoy in the log', timeoutMs: 10_000 },
      );
      assert.equal((warned.obj as { envoy?: string }).envoy, 'config');
    },
  );

  test('restarts Envoy after SIGKILL, with backoff events', { timeout: 60_000 }, async () => {
    const supervisor = new EnvoySupervisor({
      binary: envoy.path,
      bootstrap: isolatedBootstrap(),
      restart: { initialDelayMs: 100, maxDelayMs: 1000 },
    });
    after(() => supervisor.stop());
    const exits: ExitInfo[] = [];
    const delays: number[] = [];
    supervisor.on('exited', (e) => exits.push(e));
    supervisor.on('restarting', (e) => delays.push(e.delayMs));
    await supervisor.start();
    await supervisor.waitReady(20_000, ['PRE_INITIALIZING', 'INITIALIZING', 'LIVE']);
    const firstPid = supervisor.pid;
    assert.ok(firstPid !== undefined);
    process.kill(firstPid, 'SIGKILL');
    await waitFor(
      async () => supervisor.restarts === 1 && supervisor.pid !== undefined && supervisor.pid !== firstPid,
      {
        what: 'a new Envoy process after SIGKILL',
        timeoutMs: 15_000,
      },
    );
    await supervisor.waitReady(20_000, ['PRE_INITIALIZING', 'INITIALIZING', 'LIVE']);
    assert.deepEqual(exits[0], {
      code: null,
      signal: 'SIGKILL',
      expected: false,
      uptimeMs: exits[0]?.uptimeMs,
    });
    assert.deepEqual(delays, [100]);
    assert.ok(processGone(firstPid));
  });

  test(
    'stop({graceMs}) lets an in-flight request finish, then exits with no child left',
    { timeout: 60_000 },
    async () => {
      const slow = await startSlowUpstream(1500);
      after(() => slow.close());
      const listenPort = await freePort();
      const bootstrap = addStaticHttpRoute(
        isolatedBootstrap({ initialFetchTimeout: '0.5s' }),
        listenPort,
        slow.port,
      );
      const logger = recordingLogger();
      const supervisor = new EnvoySupervisor({ binary: envoy.path, bootstrap, restart: false, logger });
      after(() => supervisor.stop());
      const exits: ExitInfo[] = [];
      supervisor.on('exited', (e) => exits.push(e));
      await supervisor.start();
      await supervisor.waitReady(20_000);
      const pid = supervisor.pid as number;
      const inFlight = fetch(`http://127.0.0.1:${listenPort}/slow`).then(async (r) => ({
        status: r.status,
        body: await r.text(),
      }));
      await waitFor(async () => slow.received > 0, { what: 'the slow upstream to receive the request' });
      await supervisor.stop({ graceMs: 10_000 });
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal(answer.body, 'slow done');
      assert.ok(
        logger.records.some((r) => r.msg === 'Envoy drained'),
        'drain went through the admin API',
      );
      assert.ok(!logger.records.some((r) => /drain failed/.test(r.msg ?? '')));
      assert.equal(supervisor.state, 'stopped');
      assert.equal(supervisor.pid, undefined);
      assert.equal(exits.length, 1);
      assert.equal(exits[0]?.expected, true);
      assert.ok(processGone(pid), `Envoy ${pid} still running`);
      await supervisor.stop(); // idempotent
    },
  );

  for (const how of ['process.exit()', 'SIGKILL of Node'] as const) {
    test(`no orphan Envoy after ${how}`, { timeout: 60_000 }, async () => {
      const result = await runOwner(how === 'process.exit()' ? 'exit' : 'hang', isolatedBootstrap());
      if (how === 'SIGKILL of Node') result.owner.kill('SIGKILL');
      await waitFor(async () => processGone(result.envoyPid), {
        what: `Envoy ${result.envoyPid} to die with its Node parent`,
        timeoutMs: 10_000,
      });
    });
  }
});

/** Starts a separate Node process that supervises Envoy, and reads back Envoy's pid. */
async function runOwner(
  mode: 'exit' | 'hang',
  bootstrap: Record<string, unknown>,
): Promise<{ owner: ReturnType<typeof spawn>; envoyPid: number }> {
  const supervisorUrl = pathToFileURL(join(repoRoot, 'src', 'envoy', 'supervisor.ts')).href;
  // The owner dies without cleaning up, so give it a work dir we remove and no /dev/shm segment.
  const workDir = await mkdtemp(join(tmpdir(), 'portcullis-owner-'));
  after(() => rm(workDir, { recursive: true, force: true }));
  const options = { binary: envoy.path, bootstrap, workDir, restart: false, hotRestart: 'disabled' };
  const script = `
    import { EnvoySupervisor } from ${JSON.stringify(supervisorUrl)};
    const s = new EnvoySupervisor(${JSON.stringify(options)});
    await s.start();
    await s.waitReady(20000, ['PRE_INITIALIZING', 'INITIALIZING', 'LIVE']);
    console.log('ENVOY_PID=' + s.pid);
    ${mode === 'exit' ? 'process.exit(0);' : 'setInterval(() => {}, 1000);'}
  `;
  const owner = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  after(() => void owner.kill('SIGKILL'));
  let out = '';
  owner.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  const envoyPid = await waitFor(async () => Number(/ENVOY_PID=(\d+)/.exec(out)?.[1] ?? 0) || undefined, {
    what: 'the owner process to report its Envoy pid',
    timeoutMs: 30_000,
  });
  return { owner, envoyPid };
}
