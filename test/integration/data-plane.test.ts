// Real traffic through a real Envoy configured by Portcullis over ADS: routing, weights, active
// health checks, outlier detection, matchers and rewrites, websockets, and the request-handling
// rules of the Envoy contract (security-threats.md 0.1).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { clusterHealth } from '../support/envoy.js';
import { waitFor } from '../support/wait.js';

const HC_INTERVAL_MS = 500;
const HC_UNHEALTHY_THRESHOLD = 2;

const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'] as const;
let up: Record<(typeof ids)[number], EchoUpstream>;
let portcullis: TestPortcullis;

function routes(): Record<string, unknown>[] {
  return [
    { allow_public_unauthenticated_access: true, from: 'https://basic.test', to: up.a.url },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://weighted.test',
      to: [`${up.a.url},3`, `${up.b.url},1`],
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://health.test',
      to: [up.c.url, up.d.url],
      health_checks: [
        {
          timeout: '200ms',
          interval: `${HC_INTERVAL_MS}ms`,
          unhealthy_threshold: HC_UNHEALTHY_THRESHOLD,
          healthy_threshold: 1,
          http_health_check: { path: '/healthz' },
        },
      ],
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://outlier.test',
      to: [up.e.url, up.f.url],
      outlier_detection: {
        consecutive_5xx: 3,
        interval: '200ms',
        base_ejection_time: '30s',
        max_ejection_percent: 100,
      },
    },
    { allow_public_unauthenticated_access: true, from: 'https://match.test', path: '/exact', to: up.g.url },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://match.test',
      regex: '^/items/[0-9]+$',
      regex_rewrite_pattern: '^/items/([0-9]+)$',
      regex_rewrite_substitution: '/v2/item/\\1',
      to: up.g.url,
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://match.test',
      prefix: '/api/',
      prefix_rewrite: '/',
      to: up.g.url,
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://match.test',
      prefix: '/legacy',
      to: `${up.g.url}/new`,
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://*.wild.test',
      to: up.g.url,
      set_request_headers: { 'X-Route': 'wildcard' },
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://pre.*.rx.test', // a shape only the catch-all host's :authority regex matches
      to: up.g.url,
      set_request_headers: { 'X-Route': 'catch-all' },
    },
    {
      allow_public_unauthenticated_access: true,
      from: 'https://ws.test',
      to: up.h.url,
      allow_websockets: true,
    },
    { allow_public_unauthenticated_access: true, from: 'https://nows.test', to: up.h.url },
  ];
}

before(async () => {
  up = Object.fromEntries(
    await Promise.all(ids.map(async (id) => [id, await startEchoUpstream({ id })])),
  ) as typeof up;
  portcullis = await startPortcullis({ routes: routes() });
});

after(async () => {
  await portcullis?.stop();
  await Promise.all(Object.values(up ?? {}).map((upstream) => upstream.stop()));
});

async function echo(host: string, path: string): Promise<EchoResponse> {
  const response = await proxyRequest(portcullis.proxyPort, host, path);
  assert.equal(
    response.status,
    200,
    `${host}${path} answered ${response.status}: ${response.body.slice(0, 200)}`,
  );
  return response.json<EchoResponse>();
}

/** The cluster Portcullis compiled for the route whose `from` is `from` (read from the live IR). */
function clusterOf(from: string): string {
  const index = routes().findIndex((route) => route.from === from);
  const cluster = portcullis.running.reloader
    .lastGoodBuild()
    ?.ir.virtualHosts.flatMap((vhost) => vhost.routes)
    .find((route) => route.sourcePath === `routes[${index}]`)?.clusterName;
  assert.ok(cluster, `no cluster for ${from}`);
  return cluster;
}

describe('through Envoy', () => {
  test('a request reaches its upstream; Envoy appends the real client to X-Forwarded-For', async () => {
    const response = await proxyRequest(portcullis.proxyPort, 'basic.test', '/hello?x=1', {
      headers: { 'x-forwarded-for': '203.0.113.66' },
    });
    assert.equal(response.status, 200);
    const body = response.json<EchoResponse>();
    assert.equal(body.id, 'a');
    assert.equal(body.url, '/hello?x=1');
    assert.equal(body.headers['x-forwarded-host'], 'basic.test');
    const hops = String(body.headers['x-forwarded-for'])
      .split(',')
      .map((hop) => hop.trim());
    assert.equal(hops.length, 2, `client-supplied XFF is kept only as an earlier hop: ${hops.join(', ')}`);
    assert.notEqual(
      hops[1],
      '203.0.113.66',
      'the trusted (last) hop is the real peer, not the spoofed value',
    );
  });

  test('an unknown host gets 404 from Envoy, not an upstream', async () => {
    const before = up.a.requests;
    const response = await proxyRequest(portcullis.proxyPort, 'unknown.test', '/');
    assert.equal(response.status, 404);
    assert.equal(up.a.requests, before);
  });

  test('to weights 3:1 split 400 requests within 10%', async () => {
    const counts = { a: 0, b: 0 } as Record<string, number>;
    for (let i = 0; i < 400; i++) {
      const body = await echo('weighted.test', `/w/${i}`);
      counts[body.id] = (counts[body.id] ?? 0) + 1;
    }
    assert.equal((counts.a ?? 0) + (counts.b ?? 0), 400);
    assert.ok(Math.abs((counts.a ?? 0) - 300) <= 30, `expected ~300 to a, got ${JSON.stringify(counts)}`);
    assert.ok(Math.abs((counts.b ?? 0) - 100) <= 10 * 3, `expected ~100 to b, got ${JSON.stringify(counts)}`);
  });

  test('a stopped upstream is taken out by active health checks within interval x threshold', async () => {
    const cluster = clusterOf('https://health.test');
    await waitFor(
      async () => {
        const health = await clusterHealth(portcullis.adminUrl, cluster);
        return health.size === 2 && [...health.values()].every((host) => host.healthy);
      },
      { what: 'both health.test upstreams healthy', timeoutMs: 10_000 },
    );
    await up.d.stop();
    const stoppedAt = Date.now();
    try {
      await waitFor(
        async () => {
          const health = await clusterHealth(portcullis.adminUrl, cluster);
          return health.get(`127.0.0.1:${up.d.port}`)?.healthy === false;
        },
        { what: 'Envoy to mark the stopped upstream unhealthy', timeoutMs: 15_000, intervalMs: 20 },
      );
      const elapsed = Date.now() - stoppedAt;
      const bound = HC_INTERVAL_MS * HC_UNHEALTHY_THRESHOLD + 1500;
      assert.ok(elapsed <= bound, `took ${elapsed} ms, bound ${bound} ms`);
      for (let i = 0; i < 20; i++) assert.equal((await echo('health.test', `/h/${i}`)).id, 'c');
    } finally {
      await up.d.restart();
    }
  });

  test('an upstream answering 5xx is ejected by outlier detection', async () => {
    const cluster = clusterOf('https://outlier.test');
    up.f.setStatus(503);
    try {
      await waitFor(
        async () => {
          await proxyRequest(portcullis.proxyPort, 'outlier.test', '/o');
          const health = await clusterHealth(portcullis.adminUrl, cluster);
          return health.get(`127.0.0.1:${up.f.port}`)?.flags.includes('failed_outlier_check') === true;
        },
        { what: 'outlier detection to eject the 503 upstream', timeoutMs: 15_000 },
      );
      for (let i = 0; i < 20; i++) assert.equal((await echo('outlier.test', `/o/${i}`)).id, 'e');
    } finally {
      up.f.setStatus(200);
    }
  });

  test('path, regex and prefix routes and their rewrites land where they should', async () => {
    assert.equal((await echo('match.test', '/exact')).path, '/exact');
    assert.equal((await proxyRequest(portcullis.proxyPort, 'match.test', '/exact/more')).status, 404);
    assert.equal((await echo('match.test', '/items/42')).path, '/v2/item/42');
    assert.equal((await proxyRequest(portcullis.proxyPort, 'match.test', '/items/x')).status, 404);
    assert.equal((await echo('match.test', '/api/users')).path, '/users');
    assert.equal((await echo('match.test', '/legacy/page')).path, '/new/page');
  });

  test('a wildcard from matches subdomains but not the bare domain', async () => {
    const body = await echo('a.wild.test', '/');
    assert.equal(body.headers['x-route'], 'wildcard');
    assert.equal((await proxyRequest(portcullis.proxyPort, 'wild.test', '/')).status, 404);
  });

  test('the port the client sent is kept (the upstream sees it) and hosts still match whatever the port or case', async () => {
    for (const host of ['basic.test:8443', 'BASIC.Test:8443', 'basic.test:80']) {
      const body = await echo(host, '/port');
      assert.equal(body.id, 'a', host);
      assert.equal(body.headers['x-forwarded-host'], host, 'Envoy no longer strips the port');
    }
    assert.equal((await echo('a.wild.test:8443', '/')).headers['x-route'], 'wildcard');
    for (const host of ['pre.x.rx.test', 'pre.x.rx.test:8443']) {
      assert.equal((await echo(host, '/')).headers['x-route'], 'catch-all', host);
    }
    assert.equal((await proxyRequest(portcullis.proxyPort, 'pre.x.rx.test:84x', '/')).status, 404);
    assert.equal((await proxyRequest(portcullis.proxyPort, 'unknown.test:8443', '/')).status, 404);
  });

  test('a websocket route upgrades; a route without allow_websockets does not', async () => {
    const socket = new WebSocket(`ws://127.0.0.1:${portcullis.proxyPort}/socket`, {
      headers: { host: 'ws.test' },
    });
    const reply = await new Promise<string>((resolve, reject) => {
      socket.once('open', () => socket.send('hello'));
      socket.once('message', (data) => resolve(String(data)));
      socket.once('error', reject);
    });
    socket.close();
    assert.equal(reply, 'h:hello');
    const refused = new WebSocket(`ws://127.0.0.1:${portcullis.proxyPort}/socket`, {
      headers: { host: 'nows.test' },
    });
    const outcome = await new Promise<string>((resolve) => {
      refused.once('open', () => resolve('opened'));
      refused.once('unexpected-response', (_req, res) => resolve(`status ${res.statusCode}`));
      refused.once('error', (err) => resolve(`error ${err.message}`));
    });
    refused.terminate();
    assert.notEqual(outcome, 'opened');
  });
});

/** Sends raw bytes to Envoy and returns the status line of the answer. */
function rawStatus(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(portcullis.proxyPort, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1');
      if (data.includes('\r\n')) {
        resolve(data.slice(0, data.indexOf('\r\n')));
        socket.destroy();
      }
    });
    socket.on('error', reject);
    socket.on('end', () => resolve(data.split('\r\n')[0] ?? ''));
  });
}

describe('Envoy request-handling contract', () => {
  test('escaped slashes are rejected with 400', async () => {
    assert.match(await rawStatus('GET /api/a%2F..%2Fexact HTTP/1.1\r\nHost: match.test\r\n\r\n'), / 400 /);
  });

  test('dot segments are normalized before routing', async () => {
    const before = up.g.requests;
    assert.match(
      await rawStatus('GET /api/../exact HTTP/1.1\r\nHost: match.test\r\nConnection: close\r\n\r\n'),
      / 200 /,
    );
    assert.equal(up.g.requests, before + 1);
  });

  test('HTTP/1.0 is refused', async () => {
    assert.match(await rawStatus('GET / HTTP/1.0\r\nHost: basic.test\r\n\r\n'), / 426 /);
  });

  test('header names with underscores are rejected', async () => {
    assert.match(await rawStatus('GET / HTTP/1.1\r\nHost: basic.test\r\nX_User: admin\r\n\r\n'), / 400 /);
  });

  test('CONNECT is not routed', async () => {
    const before = up.a.requests;
    assert.match(
      await rawStatus('CONNECT basic.test:443 HTTP/1.1\r\nHost: basic.test:443\r\n\r\n'),
      / 40\d /,
    );
    assert.equal(up.a.requests, before);
  });
});
