// Live changes never drop a request (issue 28, item 2): a steady load on routes whose config keeps
// changing through every kind of change (route added, removed, reordered; `to` added, removed,
// re-weighted; health checks, outlier detection, policy, request headers and timeouts changed; the
// certificate file replaced), each applied by renaming a new file over the config and live in the
// real Envoy before the next, over delta and over state-of-the-world ADS. No request valid before
// and after a change fails, and a removed route answers 404 only once the change is live.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:https';
import {
  applyChange,
  changeKindAt,
  churnRoutes,
  extrasDiff,
  initialChurnState,
  loadedHost,
  type ChangeKind,
  type ChurnState,
} from '../support/churn.js';
import { describeLoad, startLoad, type LoadReport, type LoadTarget } from '../support/churn-load.js';
import {
  churnDir,
  churnSession,
  fingerprintOf,
  servedFingerprint,
  startChurnPortcullis,
  twoCertificates,
  type ChurnPortcullis,
} from '../support/churn-portcullis.js';
import { seededRandom } from '../support/seeded-random.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';

/** Changes per run: every kind 17 times. */
const CHANGES = 12 * 17;
const CONNECTIONS = 4;

let upstreams: EchoUpstream[] = [];

before(async () => {
  upstreams = await Promise.all(['a', 'b', 'c'].map((id) => startEchoUpstream({ id })));
});

after(async () => {
  await Promise.all(upstreams.map((upstream) => upstream.stop()));
});

/** Status of one GET on a fresh TLS connection (the probe of added and removed routes). */
function statusOn(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/',
        headers: { host },
        agent: false,
        rejectUnauthorized: false,
        servername: host,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error(`GET ${host} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * Probes `host` (a route being removed) until `done` resolves, then once more: every answer must
 * be 200 (the change not yet live) or 404 (live), and never 200 after a 404. Returns the answers.
 */
async function probeRemoval(port: number, host: string, done: Promise<void>): Promise<number[]> {
  let finished = false;
  const ended = done.finally(() => (finished = true));
  const seen: number[] = [];
  while (!finished) seen.push(await statusOn(port, host).catch(() => -1));
  await ended;
  seen.push(await statusOn(port, host).catch(() => -1));
  return seen;
}

async function churn(adsApiType: 'DELTA_GRPC' | 'GRPC'): Promise<void> {
  const dir = churnDir();
  const { keyFile, certPems } = twoCertificates(dir.path);
  const certFile = join(dir.path, 'tls.crt');
  writeFileSync(certFile, certPems[0]);
  const urls = upstreams.map((upstream) => upstream.url);
  let state: ChurnState = initialChurnState({ publicRoutes: 2, protectedRoutes: 2 });
  let portcullis: ChurnPortcullis | undefined;
  try {
    portcullis = await startChurnPortcullis(churnRoutes(state, urls), {
      adsApiType,
      dir: dir.path,
      settings: { insecure_server: false, certificate_file: certFile, certificate_key_file: keyFile },
    });
    const session = churnSession();
    await portcullis.running.sessions.put(session);
    const cookie = `_portcullis=${portcullis.running.authorize.handles().issue(session.id)}`;
    const targets: LoadTarget[] = state.loaded.map((route) => ({
      host: route.host,
      ...(route.protected ? { headers: { cookie } } : {}),
    }));
    const anonymous = await statusOn(portcullis.proxyPort, loadedHost('protected', 0));
    assert.ok([302, 401].includes(anonymous), `protected without a session: ${anonymous}`);
    const load = startLoad({ port: portcullis.proxyPort, targets, connections: CONNECTIONS, https: true });
    const random = seededRandom(28);
    const anomalies: string[] = [];
    const kinds = new Map<ChangeKind, number>();
    let report: LoadReport | undefined;
    try {
      for (let index = 0; index < CHANGES; index++) {
        const step = applyChange(state, changeKindAt(index, { certificate: true }), random, urls.length);
        const { added, removed } = extrasDiff(state, step.state);
        state = step.state;
        kinds.set(step.kind, (kinds.get(step.kind) ?? 0) + 1);
        load.mark(step.kind);
        const counts = portcullis.reloadCounts();
        const what = `change ${index} (${step.kind})`;
        if (step.kind === 'certificate replaced') {
          const temp = `${certFile}.tmp`;
          writeFileSync(temp, certPems[state.certificates % 2] as string);
          renameSync(temp, certFile);
        } else {
          portcullis.writeRoutes(churnRoutes(state, urls));
        }
        const live = portcullis.waitLive(counts, what);
        const gone = removed[0];
        const answers = gone === undefined ? undefined : await probeRemoval(portcullis.proxyPort, gone, live);
        await live;
        if (answers !== undefined && !/^(200,)*(404,)*404$/.test(`${answers.join(',')}`))
          anomalies.push(`${what}: ${gone} answered ${answers.join(',')} (want 200s then 404s)`);
        for (const host of added) {
          const status = await statusOn(portcullis.proxyPort, host);
          if (status !== 200) anomalies.push(`${what}: ${host} answered ${status} once live`);
        }
        if (step.kind === 'certificate replaced') {
          const served = await servedFingerprint(portcullis.proxyPort, loadedHost('public', 0));
          if (served !== fingerprintOf(certPems[state.certificates % 2] as string))
            anomalies.push(`${what}: the old certificate is still served once live`);
        }
      }
    } finally {
      report = await load.stop();
      process.stderr.write(
        `${adsApiType}: ${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}; ${describeLoad(report)}\n`,
      );
    }
    assert.deepEqual(report.byKind, {}, `${adsApiType}: ${describeLoad(report)}`);
    assert.ok(report.requests >= 2000, `a steady load: ${report.requests} requests`);
    assert.deepEqual(anomalies, [], 'removed routes 404 only once live; added ones 200 once live');
    assert.equal(kinds.size, 12, `every kind of change ran: ${[...kinds.keys()].join(', ')}`);
  } finally {
    await portcullis?.stop();
    dir.rm();
  }
}

describe('live changes under load', () => {
  test('delta ADS: 204 changes of every kind drop, reset and 503 no request', { timeout: 120_000 }, () =>
    churn('DELTA_GRPC'),
  );
  test(
    'state-of-the-world ADS: 204 changes of every kind drop, reset and 503 no request',
    { timeout: 120_000 },
    () => churn('GRPC'),
  );
});
