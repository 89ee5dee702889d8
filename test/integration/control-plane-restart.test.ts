// A control-plane restart under load (issue 28, item 3): Portcullis in sidecar mode (no Envoy of its
// own) and a separately started real Envoy, with load on a public and a protected route while
// Portcullis stops and starts again on the same config. The public route loses nothing; the
// protected one answers 503 only while Portcullis is down (ext_authz has no one to ask) and 200
// again after; and on reconnect Envoy receives identical versions, so no listener or cluster is
// added, modified or removed (their config_dump versions and last_updated times stay the same).
// With sessions in Redis (issue 25, Reliability) the same holds, and the session written by the
// first Portcullis still opens the protected route after the restart (nothing writes it again).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { recordingLogger } from '../../src/shared/logger.js';
import { CHURN_USER } from '../support/churn.js';
import { describeLoad, startLoad, type LoadFailure, type LoadReport } from '../support/churn-load.js';
import { churnDir, churnSession } from '../support/churn-portcullis.js';
import { startEnvoy, type RunningEnvoy } from '../support/envoy.js';
import { envoyHasApplied, proxyRequest, recordSnapshots } from '../support/portcullis.js';
import { freePort, freePortPair } from '../support/ports.js';
import { startRedisServer, type TestRedisServer } from '../support/redis-server.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import { startEchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const PUBLIC = 'public.restart.test';
const PROTECTED = 'protected.restart.test';

/** What Envoy holds: each dynamic listener's and cluster's version and last update, by name. */
interface Held {
  readonly listeners: Readonly<Record<string, string>>;
  readonly clusters: Readonly<Record<string, string>>;
  readonly counters: Readonly<Record<string, number>>;
}

const COUNTERS = [
  'cluster_manager.cluster_added',
  'cluster_manager.cluster_modified',
  'cluster_manager.cluster_removed',
  'listener_manager.listener_added',
  'listener_manager.listener_modified',
  'listener_manager.listener_removed',
  'listener_manager.listener_in_place_updated',
];

async function held(envoy: RunningEnvoy): Promise<Held> {
  const dump = JSON.parse(await envoy.admin('/config_dump')) as {
    configs: {
      '@type': string;
      dynamic_listeners?: { name: string; active_state?: { version_info?: string; last_updated?: string } }[];
      dynamic_active_clusters?: { version_info?: string; last_updated?: string; cluster: { name: string } }[];
    }[];
  };
  const listeners: Record<string, string> = {};
  const clusters: Record<string, string> = {};
  for (const config of dump.configs) {
    for (const listener of config.dynamic_listeners ?? [])
      listeners[listener.name] =
        `${listener.active_state?.version_info} @ ${listener.active_state?.last_updated}`;
    for (const cluster of config.dynamic_active_clusters ?? [])
      clusters[cluster.cluster.name] = `${cluster.version_info} @ ${cluster.last_updated}`;
  }
  const stats = JSON.parse(await envoy.admin('/stats?format=json')) as {
    stats: { name?: string; value?: number }[];
  };
  const counters = Object.fromEntries(
    COUNTERS.map((name) => [name, stats.stats.find((stat) => stat.name === name)?.value ?? -1]),
  );
  return { listeners, clusters, counters };
}

async function connectedState(envoy: RunningEnvoy): Promise<number> {
  const text = await envoy.admin('/stats?filter=^control_plane\\.connected_state$');
  return Number(/connected_state: (\d+)/.exec(text)?.[1] ?? -1);
}

/**
 * `redis`: sessions kept there (databroker_storage_type: redis) and written by the first
 * Portcullis only, so the protected route answers 200 after the restart only if the session
 * survived it in Redis; without it the session is in memory and each start writes it again.
 */
async function restartUnderLoad(adsApiType: 'DELTA_GRPC' | 'GRPC', redis?: TestRedisServer): Promise<void> {
  const dir = churnDir();
  const upstream = await startEchoUpstream({ id: 'up' });
  const configPath = join(dir.path, 'config.yaml');
  const [proxyPort, grpcPort] = [await freePort(), await freePortPair()];
  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  });
  const write = (extraRoutes: readonly Record<string, unknown>[]): void => {
    writeFileSync(
      `${configPath}.tmp`,
      stringify({
        ...SIGN_IN,
        insecure_server: true,
        // A sidecar deployment's secrets are fixed, so a restarted Portcullis signs and seals alike.
        shared_secret: Buffer.alloc(32, 28).toString('base64'),
        cookie_secret: Buffer.alloc(32, 29).toString('base64'),
        signing_key: signingKey,
        address: `127.0.0.1:${proxyPort}`,
        grpc_address: `127.0.0.1:${grpcPort}`,
        log_level: 'info',
        ...(redis === undefined
          ? {}
          : { databroker_storage_type: 'redis', databroker_storage_connection_string: redis.url }),
        routes: [
          { from: `https://${PUBLIC}`, to: upstream.url, allow_public_unauthenticated_access: true },
          { from: `https://${PROTECTED}`, to: upstream.url, allowed_users: [CHURN_USER] },
          ...extraRoutes,
        ],
      }),
    );
    renameSync(`${configPath}.tmp`, configPath);
  };
  write([]);
  let starts = 0;
  const start = async (): Promise<AllInOne> => {
    const running = await startAllInOne({
      configPath,
      env: {},
      logger: recordingLogger(),
      withoutEnvoy: true,
      reloadSettleMs: 20,
    });
    // Right after the bind (sealing is async, so a Check may come first: see `unsessioned`); in Redis, once.
    if (redis === undefined || starts === 0) await running.sessions.put(churnSession());
    starts += 1;
    recordSnapshots(running.store);
    return running;
  };
  let portcullis: AllInOne | undefined = await start();
  let envoy: RunningEnvoy | undefined;
  let report: LoadReport | undefined;
  try {
    envoy = await startEnvoy({
      bootstrap: buildBootstrap({
        nodeId: 'sidecar',
        ads: { address: '127.0.0.1', port: grpcPort, credential: portcullis.grpcCredential },
        adsApiType,
        admin: { port: 0 },
      }),
      until: 'live',
    });
    const sidecar = envoy;
    const first = portcullis;
    await waitFor(() => envoyHasApplied(sidecar.adminUrl, first), {
      what: 'the sidecar to apply the config',
    });
    const cookie = `_portcullis=${portcullis.authorize.handles().issue(churnSession().id)}`;
    assert.equal((await proxyRequest(proxyPort, PROTECTED, '/', { headers: { cookie } })).status, 200);
    const load = startLoad({
      port: proxyPort,
      targets: [{ host: PUBLIC }, { host: PROTECTED, headers: { cookie } }],
      connections: 4,
    });
    try {
      load.mark('up');
      await waitFor(async () => load.requests > 200, { what: 'load before the restart' });
      const before = await held(sidecar);
      load.mark('down');
      await portcullis.stop();
      portcullis = undefined;
      await waitFor(async () => (await connectedState(sidecar)) === 0, {
        what: 'Envoy to see Portcullis gone',
      });
      const atStop = load.requests;
      await waitFor(async () => load.requests > atStop + 200, { what: 'load while Portcullis is down' });
      portcullis = await start();
      load.mark('restarted');
      const second = portcullis;
      await waitFor(async () => (await connectedState(sidecar)) === 1, {
        what: 'Envoy to reconnect',
        timeoutMs: 30_000,
      });
      // A change after the reconnect goes out after the reconnect's own exchange on the same
      // stream: once it is live, whatever the reconnect sent has been applied.
      write([
        { from: 'https://marker.restart.test', to: upstream.url, allow_public_unauthenticated_access: true },
      ]);
      await waitFor(async () => (await proxyRequest(proxyPort, 'marker.restart.test', '/')).status === 200, {
        what: 'a change after the reconnect to be live',
      });
      await waitFor(() => envoyHasApplied(sidecar.adminUrl, second), { what: 'Envoy to apply it all' });
      const atRestart = load.requests;
      await waitFor(async () => load.requests > atRestart + 200, { what: 'load after the restart' });
      const afterRestart = await held(sidecar);
      assert.deepEqual(afterRestart.listeners, before.listeners, 'no listener was rebuilt');
      const added = Object.keys(afterRestart.clusters).filter((name) => before.clusters[name] === undefined);
      assert.equal(added.length, 1, `only the marker's cluster is new: ${added.join(', ')}`);
      const kept = Object.fromEntries(
        Object.keys(before.clusters).map((name) => [name, afterRestart.clusters[name]]),
      );
      assert.deepEqual(kept, before.clusters, 'no cluster was rebuilt');
      const expected = {
        ...before.counters,
        'cluster_manager.cluster_added': (before.counters['cluster_manager.cluster_added'] ?? 0) + 1,
      };
      assert.deepEqual(
        afterRestart.counters,
        expected,
        'no listener or cluster added, modified or removed but the marker',
      );
    } finally {
      report = await load.stop();
      process.stderr.write(`${adsApiType}: ${describeLoad(report)}\n`);
    }
    // A request in flight as Portcullis stops was sent before the mark: it counts as while down.
    const whileDown = (f: LoadFailure): boolean => f.during === 'down' || f.endedDuring === 'down';
    // In memory the restarted Portcullis starts empty and the test writes the session again; the
    // write seals it asynchronously, so a Check arriving meanwhile (still before `restarted`) finds
    // no session: a 401 then is the memory store's restart, not a failure. Redis has it throughout.
    const unsessioned = (f: LoadFailure): boolean => redis === undefined && f.kind.startsWith('401');
    const wrong = report.failures.filter(
      (f) => f.host === PUBLIC || !whileDown(f) || !(f.kind.startsWith('503') || unsessioned(f)),
    );
    assert.deepEqual(
      wrong.map((f) => `${f.kind} on ${f.host} while ${f.during}`),
      [],
      `public loses nothing; protected answers 503 only while down (${describeLoad(report)})`,
    );
    assert.ok(
      report.failures.some((f) => f.host === PROTECTED && f.during === 'down'),
      'the protected route answered 503 while Portcullis was down',
    );
  } finally {
    await envoy?.stop();
    await portcullis?.stop();
    await upstream.stop();
    dir.rm();
  }
}

describe('control plane restarted under load (sidecar mode)', () => {
  for (const [mode, adsApiType] of [
    ['delta', 'DELTA_GRPC'],
    ['state-of-the-world', 'GRPC'],
  ] as const) {
    test(
      `${mode} ADS: public loses nothing, protected 503s only while down, nothing rebuilt on reconnect`,
      {
        timeout: 90_000,
      },
      () => restartUnderLoad(adsApiType),
    );
  }
  test(
    'sessions in Redis: Envoy keeps serving, nothing rebuilt on reconnect, the session survives the restart',
    { timeout: 90_000 },
    async () => {
      const redis = await startRedisServer();
      try {
        await restartUnderLoad('DELTA_GRPC', redis);
      } finally {
        await redis.close();
      }
    },
  );
});
