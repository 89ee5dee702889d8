// Metrics and health through the real Envoy (issue 26 items 2 and 3). All-in-one: /metrics carries
// every Portcullis series with service="portcullis" and Envoy's own envoy_* stats, a protected
// request moves the decision counter, a reload moves the reload counter and the config checksum,
// and metrics_basic_auth answers 401 without its credentials. Sidecar mode: /readyz and the gRPC
// health service say not ready until an Envoy started later has ACKed the config, then ready.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { service as HEALTH_SERVICE } from 'grpc-health-check';
import { stringify } from 'yaml';
import { startAllInOne, type AllInOne } from '../../src/cmd/all-in-one.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { silentLogger } from '../../src/shared/logger.js';
import { LISTENER_TYPE } from '../../src/proto/type-urls.js';
import { startEnvoy, type RunningEnvoy } from '../support/envoy.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { freePort, freePortPair } from '../support/ports.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const CREDENTIALS = 'prom:metrics-pass';
const BASIC = { authorization: `Basic ${Buffer.from(CREDENTIALS).toString('base64')}` };

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of the sample `name{labels}` (labels in prom-client's order), or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('all-in-one /metrics', () => {
  let upstream: EchoUpstream;
  let portcullis: TestPortcullis;
  let metricsPort: number;
  const scrape = async (): Promise<string> => {
    const answer = await get(metricsPort, '/metrics', BASIC);
    assert.equal(answer.status, 200, answer.body);
    return answer.body;
  };

  before(async () => {
    upstream = await startEchoUpstream({ id: 'up' });
    metricsPort = await freePort();
    portcullis = await startPortcullis({
      metrics_address: `127.0.0.1:${metricsPort}`,
      metrics_basic_auth: Buffer.from(CREDENTIALS).toString('base64'),
      routes: [
        { from: 'https://protected.metrics.test', to: upstream.url, allowed_users: ['ada@example.com'] },
        { from: 'https://public.metrics.test', to: upstream.url, allow_public_unauthenticated_access: true },
      ],
    });
  });

  after(async () => {
    await portcullis?.stop();
    await upstream?.stop();
  });

  test('every listed series with service="portcullis", and Envoy\'s envoy_* stats beside them', async () => {
    const text = await scrape();
    const listeners = `type_url="type.googleapis.com/${LISTENER_TYPE}",service="portcullis"`;
    assert.ok((sample(text, 'portcullis_xds_pushes_total', listeners) ?? 0) >= 1, 'a listener push');
    assert.ok((sample(text, 'portcullis_xds_acks_total', listeners) ?? 0) >= 1, 'its ACK');
    assert.equal(sample(text, 'portcullis_xds_nacks_total', listeners), 0);
    assert.equal(
      sample(text, 'portcullis_config_reloads_total', 'outcome="success",service="portcullis"'),
      1,
    );
    assert.equal(sample(text, 'portcullis_config_reload_duration_seconds_count', 'service="portcullis"'), 1);
    const checksum = portcullis.running.reloader.current().activeVersion;
    assert.equal(sample(text, 'portcullis_config_info', `checksum="${checksum}",service="portcullis"`), 1);
    for (const [name, labels] of [
      ['portcullis_authz_decisions_total', 'outcome="allow",service="portcullis"'],
      ['portcullis_authz_decision_duration_seconds_count', 'service="portcullis"'],
      ['portcullis_sign_ins_total', 'outcome="success",service="portcullis"'],
      ['portcullis_session_refreshes_total', 'outcome="refreshed",service="portcullis"'],
      ['portcullis_sign_outs_total', 'service="portcullis"'],
      ['portcullis_session_store_errors_total', 'operation="get",service="portcullis"'],
      ['process_resident_memory_bytes', 'service="portcullis"'],
      ['nodejs_eventloop_lag_seconds', 'service="portcullis"'],
    ] as const)
      assert.notEqual(sample(text, name, labels), undefined, `${name}{${labels}}`);
    assert.equal(sample(text, 'portcullis_envoy_stats_up', 'service="portcullis"'), 1);
    assert.match(text, /^envoy_server_live\{\} 1$/m, "Envoy's own stats");
    assert.match(text, /^envoy_cluster_manager_cds_update_success\{\} \d+$/m);
  });

  test('a protected request moves the decision counter; a reload moves the reload counter and checksum', async () => {
    const outcome = 'outcome="sign_in",service="portcullis"';
    const before = sample(await scrape(), 'portcullis_authz_decisions_total', outcome) ?? -1;
    const answer = await proxyRequest(portcullis.proxyPort, 'protected.metrics.test', '/');
    assert.equal(answer.status, 302, 'sent to sign in');
    const afterRequest = await scrape();
    assert.equal(sample(afterRequest, 'portcullis_authz_decisions_total', outcome), before + 1);
    const latency = sample(
      afterRequest,
      'portcullis_authz_decision_duration_seconds_count',
      'service="portcullis"',
    );
    assert.ok((latency ?? 0) >= 1);
    const first = portcullis.running.reloader.current().activeVersion;
    portcullis.writeConfig({
      metrics_address: `127.0.0.1:${metricsPort}`,
      metrics_basic_auth: Buffer.from(CREDENTIALS).toString('base64'),
      routes: [
        { from: 'https://public.metrics.test', to: upstream.url, allow_public_unauthenticated_access: true },
      ],
    });
    await waitFor(async () => portcullis.running.reloader.current().reloads === 2, { what: 'the reload' });
    const reloaded = await scrape();
    const second = portcullis.running.reloader.current().activeVersion;
    assert.notEqual(second, first);
    assert.equal(
      sample(reloaded, 'portcullis_config_reloads_total', 'outcome="success",service="portcullis"'),
      2,
    );
    assert.equal(sample(reloaded, 'portcullis_config_info', `checksum="${second}",service="portcullis"`), 1);
    assert.equal(
      sample(reloaded, 'portcullis_config_info', `checksum="${first}",service="portcullis"`),
      undefined,
    );
  });

  test('metrics_basic_auth: 401 with the realm without its credentials; health and readiness stay open', async () => {
    const refused = await get(metricsPort, '/metrics');
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['www-authenticate'], 'Basic realm="portcullis metrics"');
    const wrong = await get(metricsPort, '/metrics', {
      authorization: `Basic ${Buffer.from('prom:nope').toString('base64')}`,
    });
    assert.equal(wrong.status, 401);
    assert.equal((await get(metricsPort, '/healthz')).status, 200);
    const ready = await get(metricsPort, '/readyz');
    assert.equal(ready.status, 200, ready.body);
    assert.deepEqual(JSON.parse(ready.body), { ready: true, checks: { envoy: 'ok', session_store: 'ok' } });
  });
});

const Health = grpc.makeClientConstructor(HEALTH_SERVICE as unknown as grpc.ServiceDefinition, 'Health');

/** The process's ('') gRPC health status, or the error's status name. */
async function grpcHealth(port: number): Promise<string> {
  const client = new Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const check = client['check'] as (
    request: { service: string },
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { status: string }) => void,
  ) => void;
  try {
    return await new Promise<string>((resolve) =>
      check.call(client, { service: '' }, { deadline: Date.now() + 5000 }, (err, response) =>
        resolve(err === null ? String(response?.status) : (grpc.status[err.code] ?? String(err.code))),
      ),
    );
  } finally {
    client.close();
  }
}

describe('sidecar readiness', () => {
  let dir: string;
  let running: AllInOne | undefined;
  let envoy: RunningEnvoy | undefined;

  after(async () => {
    await envoy?.stop();
    await running?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('/readyz and gRPC health are not ready before an Envoy ACKed the config, ready after', async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-metrics-'));
    const configPath = join(dir, 'config.yaml');
    const [proxyPort, grpcPort, adminPort, metricsPort] = [
      await freePort(),
      await freePortPair(),
      await freePort(),
      await freePort(),
    ];
    writeFileSync(
      configPath,
      stringify({
        ...SIGN_IN,
        insecure_server: true,
        shared_secret: Buffer.alloc(32, 41).toString('base64'),
        address: `127.0.0.1:${proxyPort}`,
        grpc_address: `127.0.0.1:${grpcPort}`,
        envoy_admin_address: `127.0.0.1:${adminPort}`,
        metrics_address: `127.0.0.1:${metricsPort}`,
        routes: [
          {
            from: 'https://public.sidecar.test',
            to: 'http://127.0.0.1:9',
            allow_public_unauthenticated_access: true,
          },
        ],
      }),
    );
    running = await startAllInOne({ configPath, env: {}, logger: silentLogger, withoutEnvoy: true });
    assert.equal((await get(metricsPort, '/healthz')).status, 200, 'alive at once');
    const waiting = await get(metricsPort, '/readyz');
    assert.equal(waiting.status, 503, waiting.body);
    assert.deepEqual(JSON.parse(waiting.body), {
      ready: false,
      checks: { envoy: 'no Envoy has acknowledged a config yet', session_store: 'ok' },
    });
    assert.equal(await grpcHealth(grpcPort), 'NOT_SERVING');
    const alone = await get(metricsPort, '/metrics');
    assert.match(alone.body, /^portcullis_envoy_stats_up\{service="portcullis"\} 0$/m, 'no Envoy to read');
    envoy = await startEnvoy({
      bootstrap: buildBootstrap({
        nodeId: 'sidecar',
        ads: { address: '127.0.0.1', port: grpcPort, credential: running.grpcCredential },
        adsApiType: 'DELTA_GRPC',
        admin: { address: '127.0.0.1', port: adminPort },
      }),
    });
    const port = metricsPort;
    const ready = await waitFor(
      async () => {
        const answer = await get(port, '/readyz');
        return answer.status === 200 ? answer : undefined;
      },
      { what: '/readyz to answer 200 once the sidecar ACKed', timeoutMs: 20_000 },
    );
    assert.deepEqual(JSON.parse(ready.body), { ready: true, checks: { envoy: 'ok', session_store: 'ok' } });
    assert.equal(await grpcHealth(grpcPort), 'SERVING');
    const withEnvoy = await get(metricsPort, '/metrics');
    assert.match(withEnvoy.body, /^portcullis_envoy_stats_up\{service="portcullis"\} 1$/m);
    assert.match(withEnvoy.body, /^envoy_server_live\{\} 1$/m, "the sidecar's stats at envoy_admin_address");
  });
});
