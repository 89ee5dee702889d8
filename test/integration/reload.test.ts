// Hot reload through a real Envoy: routes added and removed, no request lost across 20 reloads,
// invalid and vanished configs keep the last good config serving, an Envoy NACK is logged and
// survived, a crashed Envoy is restarted, and a second Envoy (SotW) converges with the first.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import {
  envoyHasApplied,
  proxyRequest,
  startPortcullis,
  type TestPortcullis,
} from '../support/portcullis.js';
import { startEnvoy } from '../support/envoy.js';
import { waitFor } from '../support/wait.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { compile } from '../../src/xds/compile/compile.js';
import { buildSnapshot } from '../../src/xds/snapshot/build-snapshot.js';
import { ROUTE_CONFIGURATION_TYPE, SCOPED_ROUTE_CONFIGURATION_TYPE } from '../../src/proto/type-urls.js';
import { editableCompiled } from '../support/editable-compiled.js';

let upstream: EchoUpstream;
let portcullis: TestPortcullis;
const stable = (): Record<string, unknown> => ({
  allow_public_unauthenticated_access: true,
  from: 'https://stable.test',
  to: upstream.url,
});

before(async () => {
  upstream = await startEchoUpstream({ id: 'u' });
  portcullis = await startPortcullis({ routes: [stable()] });
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

async function status(host: string): Promise<number> {
  return (await proxyRequest(portcullis.proxyPort, host, '/')).status;
}

function failuresSoFar(): number {
  return portcullis.running.reloader.current().failures;
}

describe('hot reload', () => {
  test('a route added takes effect, and a route removed stops answering', async () => {
    assert.equal(await status('added.test'), 404);
    portcullis.writeConfig({
      routes: [
        stable(),
        { allow_public_unauthenticated_access: true, from: 'https://added.test', to: upstream.url },
      ],
    });
    await waitFor(async () => (await status('added.test')) === 200, {
      what: 'the added route to answer',
      timeoutMs: 10_000,
    });
    portcullis.writeConfig({ routes: [stable()] });
    await waitFor(async () => (await status('added.test')) === 404, {
      what: 'the removed route to stop answering',
      timeoutMs: 10_000,
    });
    assert.equal(await status('stable.test'), 200);
  });

  test('20 reloads during a steady stream of requests lose none', async () => {
    let running = true;
    const outcomes: number[] = [];
    const stream = (async () => {
      while (running) outcomes.push(await status('stable.test').catch(() => -1));
    })();
    try {
      for (let i = 0; i < 20; i++) {
        portcullis.writeConfig({
          routes: [
            stable(),
            {
              allow_public_unauthenticated_access: true,
              from: `https://extra-${i}.test`,
              to: upstream.url,
              set_response_headers: { 'X-Reload': String(i) },
            },
          ],
        });
        await waitFor(async () => (await status(`extra-${i}.test`)) === 200, {
          what: `reload ${i} to be live`,
          timeoutMs: 10_000,
        });
      }
    } finally {
      running = false;
      await stream;
    }
    const failed = outcomes.filter((code) => code !== 200);
    assert.ok(outcomes.length >= 40, `expected a steady stream, got ${outcomes.length} requests`);
    assert.deepEqual(failed, [], `${failed.length} of ${outcomes.length} requests failed during reloads`);
  });

  test('an invalid reload keeps the old routes serving and says why, with the key path', async () => {
    const before = failuresSoFar();
    const bad = {
      ...portcullis.baseConfig(),
      routes: [
        stable(),
        { allow_public_unauthenticated_access: true, from: 'https://bad.test/with/path', to: upstream.url },
      ],
    };
    portcullis.writeConfig(bad);
    await waitFor(async () => failuresSoFar() > before, { what: 'the invalid reload to be rejected' });
    const logged = portcullis.logs.find((record) => record.msg?.includes('config reload rejected'));
    assert.ok(logged, 'the rejection is logged');
    const problems = (logged.obj as { problems: string[] }).problems.join('\n');
    assert.match(
      problems,
      /routes\[1\]\.from: config: policy source url \(https:\/\/bad\.test\/with\/path\) contains a path/,
    );
    assert.equal(await status('stable.test'), 200);
    assert.equal(await status('bad.test'), 404);
  });

  test('a half-written file is rejected, and the completed file is applied', async () => {
    const before = failuresSoFar();
    writeFileSync(
      portcullis.configPath,
      'insecure_server: true\nroutes:\n  - from: https://half.test\n    to: [',
    );
    await waitFor(async () => failuresSoFar() > before, { what: 'the half-written file to be rejected' });
    assert.equal(await status('stable.test'), 200);
    portcullis.writeConfig({
      routes: [
        stable(),
        { allow_public_unauthenticated_access: true, from: 'https://half.test', to: upstream.url },
      ],
    });
    await waitFor(async () => (await status('half.test')) === 200, {
      what: 'the completed file to be applied',
    });
  });

  test('a config file that vanishes keeps the last good config serving until it returns', async () => {
    const before = failuresSoFar();
    rmSync(portcullis.configPath);
    await waitFor(async () => failuresSoFar() > before, { what: 'the missing file to be reported' });
    const logged = portcullis.logs.filter((record) => record.msg?.includes('config reload rejected')).at(-1);
    assert.match(
      (logged?.obj as { problems: string[] }).problems.join('\n'),
      /cannot read config file: ENOENT/,
    );
    assert.equal(await status('stable.test'), 200);
    portcullis.writeConfig({
      routes: [
        stable(),
        { allow_public_unauthenticated_access: true, from: 'https://back.test', to: upstream.url },
      ],
    });
    await waitFor(async () => (await status('back.test')) === 200, {
      what: 'the restored file to be applied',
    });
  });

  test('a resource Envoy rejects is NACKed, logged with its error_detail, and the old config keeps serving', async () => {
    const good = portcullis.running.reloader.lastGoodBuild();
    assert.ok(good);
    const nacksBefore = portcullis.running.ads.stats().nacks.routes;
    // Bypass Portcullis's own validation to make Envoy the one that says no: RE2 caps repetition at
    // 1000. Exact hosts: each host's routes are in its own RouteConfiguration (per-host delivery).
    const broken = editableCompiled(compile(good.ir));
    assert.ok(broken[SCOPED_ROUTE_CONFIGURATION_TYPE].length > 0, 'per-host delivery');
    const routeConfig = broken[ROUTE_CONFIGURATION_TYPE][0]?.message as {
      virtual_hosts: { routes: { match: Record<string, unknown> }[] }[];
    };
    const firstRoute = routeConfig.virtual_hosts[0]?.routes[0];
    assert.ok(firstRoute);
    firstRoute.match = { safe_regex: { regex: 'a{1001}' } };
    portcullis.running.store.publish(buildSnapshot(broken).snapshot);
    await waitFor(async () => portcullis.running.ads.stats().nacks.routes > nacksBefore, {
      what: "Envoy to NACK the host's RouteConfiguration",
    });
    const nack = portcullis.running.ads.stats().lastNack;
    assert.ok(nack && nack.message.length > 0, 'the NACK carries Envoy error_detail');
    assert.ok(
      portcullis.logs.some(
        (record) => record.level === 'warn' && JSON.stringify(record).includes(nack.message.slice(0, 40)),
      ),
    );
    assert.equal(await status('stable.test'), 200);
    portcullis.running.store.publish(buildSnapshot(compile(good.ir)).snapshot);
    portcullis.running.reloader.reload();
    await waitFor(() => envoyHasApplied(portcullis.adminUrl, portcullis.running), {
      what: 'Envoy to apply the good config again',
    });
  });

  test('a crashed Envoy is restarted by the supervisor and serves the current config', async () => {
    const supervisor = portcullis.running.supervisor;
    assert.ok(supervisor?.pid);
    const pid = supervisor.pid;
    process.kill(pid, 'SIGKILL');
    await waitFor(
      async () => supervisor.pid !== undefined && supervisor.pid !== pid && supervisor.restarts > 0,
      {
        what: 'the supervisor to restart Envoy',
        timeoutMs: 15_000,
      },
    );
    await waitFor(async () => (await status('stable.test').catch(() => 0)) === 200, {
      what: 'the restarted Envoy to serve',
      timeoutMs: 20_000,
    });
  });

  test('a second Envoy over state-of-the-world ADS converges on the same config', async () => {
    const second = await startEnvoy({
      bootstrap: buildBootstrap({
        nodeId: 'second',
        ads: {
          address: '127.0.0.1',
          port: portcullis.running.grpcPort,
          credential: portcullis.running.grpcCredential,
        },
        adsApiType: 'GRPC',
        admin: { port: 0 },
      }),
      until: 'live',
    });
    try {
      await waitFor(() => envoyHasApplied(second.adminUrl, portcullis.running), {
        what: 'the SotW Envoy to converge',
      });
      portcullis.writeConfig({
        routes: [
          stable(),
          { allow_public_unauthenticated_access: true, from: 'https://both.test', to: upstream.url },
        ],
      });
      await waitFor(async () => (await status('both.test')) === 200, {
        what: 'the delta Envoy to apply the reload',
      });
      await waitFor(() => envoyHasApplied(second.adminUrl, portcullis.running), {
        what: 'the SotW Envoy to apply the reload',
      });
      const listeners = JSON.parse(
        (await adminRequest(second.adminUrl, '/config_dump?resource=dynamic_listeners')).body,
      ) as { configs: unknown[] };
      assert.equal(listeners.configs.length, 1, 'the SotW Envoy has the listener');
    } finally {
      await second.stop();
    }
  });
});
