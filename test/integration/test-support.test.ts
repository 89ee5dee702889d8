import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { clusterHealth, startEnvoy } from '../support/envoy.js';
import { freePort } from '../support/ports.js';
import { type EchoResponse, startEchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';
import { addStaticHttpRoute } from './envoy-fixtures.js';
import { TEST_GRPC_CREDENTIAL } from '../support/grpc-credential.js';

/** Opens a WebSocket, sends one message, returns the reply (or the HTTP status of a refused upgrade). */
function wsRoundTrip(url: string, message: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => ws.send(message));
    ws.on('message', (data) => {
      resolve(String(data));
      ws.close();
    });
    ws.on('unexpected-response', (_req, res) => resolve(`refused ${res.statusCode}`));
    ws.on('error', reject);
  });
}

describe('waitFor', () => {
  test('returns the first truthy probe result, treating throws as not yet', async () => {
    let n = 0;
    const value = await waitFor(
      async () => {
        n += 1;
        if (n < 3) throw new Error('not yet');
        return n === 3 ? 'ready' : undefined;
      },
      { what: 'n to reach 3', intervalMs: 1 },
    );
    assert.equal(value, 'ready');
  });

  test('times out with what it waited for and the last error', async () => {
    await assert.rejects(
      waitFor(
        async () => {
          throw new Error('boom 42');
        },
        { what: 'the impossible', timeoutMs: 50, intervalMs: 10 },
      ),
      /waiting for the impossible .*last: probe threw: boom 42/,
    );
    await assert.rejects(
      waitFor(async () => false, { what: 'x', timeoutMs: 20 }),
      /last: probe returned false/,
    );
  });
});

test('freePort returns a port that can be bound on 127.0.0.1', async () => {
  const port = await freePort();
  assert.ok(port > 0 && port < 65536);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('startEchoUpstream', () => {
  test('echoes requests as JSON, forced status, healthz, counts, stop and restart on the same port', async () => {
    const up = await startEchoUpstream({ id: 'a' });
    after(() => up.stop());
    const res = await fetch(`${up.url}/some/path?q=1`, { headers: { 'x-test': 'yes' } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as EchoResponse;
    assert.equal(body.id, 'a');
    assert.equal(body.method, 'GET');
    assert.equal(body.path, '/some/path');
    assert.equal(body.url, '/some/path?q=1');
    assert.equal(body.headers['x-test'], 'yes');
    assert.equal((await fetch(`${up.url}/healthz`)).status, 200);
    up.setStatus(503);
    assert.equal((await fetch(`${up.url}/x`)).status, 503);
    assert.equal((await fetch(`${up.url}/healthz`)).status, 503);
    assert.deepEqual([up.requests, up.healthChecks], [2, 2]);
    up.setStatus(200);
    await up.stop();
    await assert.rejects(fetch(`${up.url}/x`));
    await up.restart();
    assert.equal((await fetch(`${up.url}/x`)).status, 200);
    up.resetCounts();
    assert.equal(up.requests, 0);
    assert.throws(() => up.setStatus(42));
  });

  test('accepts WebSocket upgrades and echoes with its id; refuses them while forced', async () => {
    const up = await startEchoUpstream({ id: 'ws1' });
    after(() => up.stop());
    assert.equal(await wsRoundTrip(`ws://127.0.0.1:${up.port}/chat`, 'hello'), 'ws1:hello');
    up.setStatus(503);
    assert.equal(await wsRoundTrip(`ws://127.0.0.1:${up.port}/chat`, 'hello'), 'refused 503');
  });
});

test(
  'through Envoy: echo upstream answers, clusterHealth follows its health checks',
  { timeout: 60_000 },
  async () => {
    const up = await startEchoUpstream({ id: 'behind-envoy' });
    after(() => up.stop());
    const listenPort = await freePort();
    const base = buildBootstrap({
      ads: { address: '127.0.0.1', port: await freePort(), credential: TEST_GRPC_CREDENTIAL },
      admin: { port: 0 },
      initialFetchTimeout: '0.5s',
    });
    const running = await startEnvoy({
      bootstrap: addStaticHttpRoute(base, listenPort, up.port, { healthCheckPath: '/healthz' }),
      until: 'live',
    });
    after(() => running.stop());
    const host = `127.0.0.1:${up.port}`;
    const healthIs = (healthy: boolean) => async () => {
      const h = (await clusterHealth(running.adminUrl, 'test-upstream')).get(host);
      return h !== undefined && h.healthy === healthy ? h : undefined;
    };
    await waitFor(healthIs(true), { what: `${host} healthy in Envoy`, timeoutMs: 10_000 });
    const res = await fetch(`http://127.0.0.1:${listenPort}/via-envoy`);
    assert.equal(((await res.json()) as EchoResponse).id, 'behind-envoy');
    up.setStatus(503);
    const sick = await waitFor(healthIs(false), { what: `${host} failing health checks`, timeoutMs: 10_000 });
    assert.ok(sick.flags.includes('failed_active_hc'), sick.flags.join('/'));
    up.setStatus(200);
    await waitFor(healthIs(true), { what: `${host} healthy again`, timeoutMs: 10_000 });
  },
);
