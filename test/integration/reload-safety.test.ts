// Issue 33 items 13 and 15 through a real Envoy. 13: a writer that writes half the config in place,
// pauses far longer than the settle time with the file open, then writes the rest: the half (which
// would make /admin public) is never published, /admin stays protected throughout; a reload that
// does make /admin public logs a warning. 15: a build Envoy NACKs (made through the compile-stage
// test seam, a module the build worker imports: no config that passes validation is known to be
// NACKed) is logged with Envoy's
// error_detail, counted as a failed reload, and ext_authz keeps deciding with the previous policies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { request } from 'node:http';
import { stringify } from 'yaml';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { NACK_MARKER } from '../support/nackable-seam.js';

const HOST = 'app.safety.test';
const CREDENTIALS = 'prom:metrics-pass';
let upstream: EchoUpstream;
let portcullis: TestPortcullis;
let metricsPort: number;
/** The config text: the public route first (its `prefix` line last, where the writer pauses), then /admin. */
function configText(generation: string, admin: 'protected' | 'public' = 'protected'): string {
  const base = { ...portcullis.baseConfig() };
  delete base.routes;
  const policy =
    admin === 'protected'
      ? `    allowed_users:\n      - alice@example.test\n`
      : `    allow_public_unauthenticated_access: true\n`;
  return (
    stringify(base) +
    `routes:\n` +
    `  - from: https://${HOST}\n    to: ${upstream.url}\n    allow_public_unauthenticated_access: true\n` +
    `    set_response_headers:\n      X-Gen: "${generation}"\n    prefix: /public-area\n` +
    `  - from: https://${HOST}\n    prefix: /admin\n    to: ${upstream.url}\n${policy}`
  );
}

/** Replaces the config atomically (temp file + rename): the safe way. */
function renameInto(text: string): void {
  writeFileSync(`${portcullis.configPath}.tmp`, text);
  renameSync(`${portcullis.configPath}.tmp`, portcullis.configPath);
}

async function adminStatus(): Promise<number> {
  return (await proxyRequest(portcullis.proxyPort, HOST, '/admin')).status;
}

async function generation(): Promise<string | undefined> {
  const header = (await proxyRequest(portcullis.proxyPort, HOST, '/public-area')).headers['x-gen'];
  return typeof header === 'string' ? header : undefined;
}

function failedReloadsMetric(): Promise<number> {
  return new Promise((resolve, reject) => {
    const auth = `Basic ${Buffer.from(CREDENTIALS).toString('base64')}`;
    const req = request(
      {
        host: '127.0.0.1',
        port: metricsPort,
        path: '/metrics',
        headers: { authorization: auth },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const line = Buffer.concat(chunks)
            .toString('utf8')
            .split('\n')
            .find((row) => row.startsWith('portcullis_config_reloads_total{outcome="failure"'));
          resolve(line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1)));
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  upstream = await startEchoUpstream({ id: 'u' });
  metricsPort = await freePort();
  portcullis = await startPortcullis(
    {
      metrics_address: `127.0.0.1:${metricsPort}`,
      metrics_basic_auth: Buffer.from(CREDENTIALS).toString('base64'),
      routes: [{ from: `https://${HOST}`, to: upstream.url, allow_public_unauthenticated_access: true }],
    },
    // In the build worker, as in production: the seam is a module it imports.
    { afterCompileModule: new URL('../support/nackable-seam.ts', import.meta.url).href },
  );
  renameInto(configText('1'));
  await waitFor(async () => (await generation()) === '1', { what: 'generation 1 to serve' });
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

describe('reload safety (issue 33 items 13 and 15)', () => {
  test('a writer pausing mid-write with the file open never gets its half published', async () => {
    assert.equal(await adminStatus(), 302, '/admin is protected: sign-in first');
    const text = configText('2');
    // The half ends in `prefix: /`: on its own a valid config whose public `/` route answers /admin.
    const cut = text.indexOf('prefix: /public-area') + 'prefix: /'.length;
    const fd = openSync(portcullis.configPath, 'w'); // in place: same inode, truncated
    const seen: number[] = [];
    try {
      writeSync(fd, text.slice(0, cut));
      // The pause: 1.5 s, 75 times the 20 ms settle time; /admin is polled throughout.
      const until = performance.now() + 1500;
      while (performance.now() < until) seen.push(await adminStatus());
      writeSync(fd, text.slice(cut));
    } finally {
      closeSync(fd);
    }
    await waitFor(async () => (await generation()) === '2', { what: 'the whole file to be applied' });
    seen.push(await adminStatus());
    assert.ok(seen.length >= 10, `polled ${seen.length} times`);
    assert.deepEqual(
      seen.filter((status) => status !== 302),
      [],
      `/admin answered other than 302 in ${seen.length} requests`,
    );
    assert.ok(
      portcullis.logs.some((r) => (r.msg ?? '').includes('still open for writing')),
      'the wait for the writer is logged',
    );
  });

  test('a reload that makes a protected path public logs a warning naming it', async () => {
    renameInto(configText('3', 'public'));
    await waitFor(async () => (await adminStatus()) === 200, { what: '/admin to go public' });
    const warned = portcullis.logs.find(
      (r) => r.level === 'warn' && (r.msg ?? '').includes('makes a protected path public'),
    );
    assert.ok(warned, 'warned');
    assert.match(warned.msg ?? '', new RegExp(`${HOST.replaceAll('.', '\\.')} prefix /admin`));
    renameInto(configText('4'));
    await waitFor(async () => (await adminStatus()) === 302, { what: '/admin to be protected again' });
  });

  test('a build Envoy NACKs is a failed reload and ext_authz keeps the policies Envoy runs', async () => {
    await waitFor(async () => (await generation()) === '4', { what: 'generation 4 to serve' });
    const failures = portcullis.running.reloader.current().failures;
    const failedMetric = await failedReloadsMetric();
    renameInto(configText(`${NACK_MARKER}5`, 'public'));
    await waitFor(async () => portcullis.running.reloader.current().failures > failures, {
      what: 'the NACKed reload to count as failed',
      timeoutMs: 15_000,
    });
    const logged = portcullis.logs.find(
      (r) => r.level === 'error' && JSON.stringify(r.obj).includes('"stage":"envoy"'),
    );
    assert.ok(logged, 'the failed reload is logged at error, stage envoy');
    assert.ok(
      portcullis.logs.some((r) => r.msg?.startsWith('config reloaded') === true && 'chunks' in r.obj),
      'the builds ran in the build worker (their reload lines count the delta chunks)',
    );
    assert.match(
      JSON.stringify(logged.obj),
      /rejected the routes of version [0-9a-f]+: .*a\{1001\}|rejected the routes/,
    );
    assert.ok(JSON.stringify(logged.obj).length > 80, "with Envoy's error_detail");
    assert.equal(
      await failedReloadsMetric(),
      failedMetric + 1,
      'portcullis_config_reloads_total{outcome="failure"}',
    );
    for (let i = 0; i < 10; i++)
      assert.equal(await adminStatus(), 302, 'ext_authz still applies the taken policies');
    assert.equal(await generation(), '4');
    renameInto(configText('6', 'public'));
    await waitFor(async () => (await adminStatus()) === 200, { what: 'an accepted build to apply' });
  });
});
