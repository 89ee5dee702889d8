// The metrics and health server on loopback: /healthz, /readyz (503 with what is missing, then
// 200), /metrics with Envoy's stats appended from a fake admin (and portcullis_envoy_stats_up 0
// when it is down), Basic auth (401 with the realm, 200 with the credentials), 404 and 405, and a
// taken address as a clear error.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { Secret } from '../../../src/shared/secret.js';
import { PortcullisError } from '../../../src/shared/errors.js';
import {
  startMetricsServer,
  startWaitingMetricsServer,
  type MetricsServer,
} from '../../../src/observability/metrics/metrics-server.js';
import { PortcullisMetrics } from '../../../src/observability/metrics/portcullis-metrics.js';
import { Readiness } from '../../../src/observability/metrics/readiness.js';
import { LISTENER_TYPE, ROUTE_CONFIGURATION_TYPE } from '../../../src/proto/type-urls.js';
import type { AdsStreamEvent } from '../../../src/xds/server/events.js';

const ENVOY_TEXT = '# TYPE envoy_server_live gauge\nenvoy_server_live{} 1\n';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
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

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

let envoyAdmin: Server;
let envoyUrl: string;
let envoyUp = true;
const metrics = new PortcullisMetrics();
const readiness = new Readiness({ envoy: true });
let auth: Secret<string> | undefined;
let server: MetricsServer;

before(async () => {
  envoyAdmin = createServer((req, res) => {
    if (!envoyUp) {
      res.writeHead(503).end('down');
      return;
    }
    res.writeHead(req.url === '/stats/prometheus' ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(req.url === '/stats/prometheus' ? ENVOY_TEXT : '');
  });
  envoyUrl = `http://127.0.0.1:${await listen(envoyAdmin)}`;
  metrics.setService('portcullis');
  server = await startMetricsServer({
    host: '127.0.0.1',
    port: 0,
    metrics,
    readiness,
    envoyAdminUrl: () => envoyUrl,
    basicAuth: () => auth,
  });
});

after(async () => {
  await server.close();
  await new Promise((resolve) => envoyAdmin.close(resolve));
});

test('/healthz answers 200 while the process runs; /readyz is 503 until an Envoy ACKed, then 200', async () => {
  assert.equal((await get(server.port, '/healthz')).status, 200);
  const waiting = await get(server.port, '/readyz');
  assert.equal(waiting.status, 503);
  assert.equal(waiting.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(waiting.body), {
    ready: false,
    checks: { envoy: 'no Envoy has acknowledged a config yet' },
  });
  for (const type of [LISTENER_TYPE, ROUTE_CONFIGURATION_TYPE])
    readiness.observe({ kind: 'acked', stream: 1, nodeId: 'n', type, version: 'v' } as AdsStreamEvent);
  const ready = await get(server.port, '/readyz');
  assert.equal(ready.status, 200);
  assert.deepEqual(JSON.parse(ready.body), { ready: true, checks: { envoy: 'ok' } });
});

test("/metrics: our series, then Envoy's; when Envoy cannot be read, ours with portcullis_envoy_stats_up 0", async () => {
  envoyUp = true;
  const both = await get(server.port, '/metrics');
  assert.equal(both.status, 200);
  assert.match(String(both.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  assert.match(both.body, /^portcullis_envoy_stats_up\{service="portcullis"\} 1$/m);
  assert.match(both.body, /^portcullis_config_reloads_total\{outcome="success",service="portcullis"\} 0$/m);
  assert.ok(both.body.endsWith(ENVOY_TEXT), 'Envoy stats are appended as they are');
  envoyUp = false;
  const ours = await get(server.port, '/metrics');
  assert.equal(ours.status, 200);
  assert.match(ours.body, /^portcullis_envoy_stats_up\{service="portcullis"\} 0$/m);
  assert.equal(ours.body.includes('envoy_server_live'), false);
  envoyUp = true;
});

test('/metrics with metrics_basic_auth: 401 with the realm unless the credentials match', async () => {
  auth = new Secret('prom:s3cret');
  try {
    const basic = (text: string): Record<string, string> => ({
      authorization: `Basic ${Buffer.from(text).toString('base64')}`,
    });
    for (const headers of [
      {},
      basic('prom:wrong'),
      basic('prom:s3cret2'),
      basic('other:s3cret'),
      { authorization: 'Bearer x' },
    ]) {
      const refused = await get(server.port, '/metrics', headers);
      assert.equal(refused.status, 401, JSON.stringify(headers));
      assert.equal(refused.headers['www-authenticate'], 'Basic realm="portcullis metrics"');
      assert.equal(refused.body.includes('portcullis_'), false);
    }
    const allowed = await get(server.port, '/metrics', basic('prom:s3cret'));
    assert.equal(allowed.status, 200);
    assert.match(allowed.body, /portcullis_authz_decisions_total/);
    assert.equal((await get(server.port, '/healthz')).status, 200, 'probes need no credentials');
  } finally {
    auth = undefined;
  }
});

test('other paths are 404, other methods 405', async () => {
  assert.equal((await get(server.port, '/')).status, 404);
  assert.equal((await get(server.port, '/metrics/x')).status, 404);
  const post = await get(server.port, '/metrics', {}, 'POST');
  assert.equal(post.status, 405);
  assert.equal(post.headers['allow'], 'GET, HEAD');
});

test('a taken metrics_address is METRICS_BIND_FAILED naming it', async () => {
  await assert.rejects(
    startMetricsServer({
      host: '127.0.0.1',
      port: server.port,
      metrics,
      readiness,
      envoyAdminUrl: () => undefined,
      basicAuth: () => undefined,
    }),
    (err: unknown) =>
      err instanceof PortcullisError &&
      err.code === 'METRICS_BIND_FAILED' &&
      err.message.includes(`metrics_address 127.0.0.1:${server.port}`),
  );
});

test('a waiting server: /healthz 200, /readyz 503 naming what it waits for, /metrics 503; then it serves the sources handed to it', async () => {
  const waiting = await startWaitingMetricsServer({
    host: '127.0.0.1',
    port: 0,
    waitingFor: 'waiting for the settings',
  });
  try {
    assert.equal((await get(waiting.port, '/healthz')).status, 200);
    const ready = await get(waiting.port, '/readyz');
    assert.equal(ready.status, 503);
    assert.deepEqual(JSON.parse(ready.body), {
      ready: false,
      checks: { settings: 'waiting for the settings' },
    });
    const early = await get(waiting.port, '/metrics');
    assert.equal(early.status, 503);
    assert.equal(early.body, 'waiting for the settings\n');
    assert.equal((await get(waiting.port, '/other')).status, 404);
    waiting.serve({
      metrics,
      readiness: new Readiness({ envoy: false }),
      envoyAdminUrl: () => undefined,
      basicAuth: () => new Secret('user:pass'),
    });
    assert.equal((await get(waiting.port, '/readyz')).status, 200);
    assert.equal((await get(waiting.port, '/metrics')).status, 401, 'the handed basic auth applies');
  } finally {
    await waiting.close();
    await waiting.close();
  }
});
