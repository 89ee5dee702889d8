// Filter configs served on their own over ADS (ECDS), through the real Envoy: a listener whose
// HTTP filter takes its config from the snapshot store's overlay starts on the filter's default
// config, and each overlay change (what the fast path's revocations will use) reaches Envoy
// without a build, without draining the listener, over delta and SotW ADS. The filter is added to
// the compiled listener by the test (StartOptions.afterCompile): no product route uses ECDS yet.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminRequest } from '../../src/envoy/admin.js';
import type { CompiledResources } from '../../src/proto/compiled.js';
import { LISTENER_TYPE } from '../../src/proto/type-urls.js';
import { denyHeaderFilterConfig, RBAC_TYPE_URL } from '../support/ecds-filter.js';
import { editableCompiled } from '../support/editable-compiled.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const HOST = 'ecds.test';
const FILTER = 'portcullis-test-ecds';

/** The compiled resources with an ECDS-configured RBAC filter first in the main listener's HTTP filters. */
function withEcdsFilter(compiled: CompiledResources): CompiledResources {
  const edited = editableCompiled(compiled);
  for (const { message } of edited[LISTENER_TYPE]) {
    const chains = (message.filter_chains ?? []) as {
      filters?: { typed_config?: Record<string, unknown> }[];
    }[];
    for (const chain of chains) {
      const manager = chain.filters?.[0]?.typed_config;
      const filters = manager?.http_filters as Record<string, unknown>[] | undefined;
      if (filters === undefined) continue;
      filters.unshift({
        name: FILTER,
        config_discovery: {
          config_source: { ads: {}, resource_api_version: 'V3' },
          // No rules: every request passes until the overlay says otherwise.
          default_config: { '@type': RBAC_TYPE_URL },
          apply_default_config_without_warming: true,
          type_urls: [RBAC_TYPE_URL],
        },
      });
    }
  }
  return edited as unknown as CompiledResources;
}

async function status(portcullis: TestPortcullis, headers: Record<string, string> = {}): Promise<number> {
  return (await proxyRequest(portcullis.proxyPort, HOST, '/', { headers })).status;
}

async function listenerModifications(portcullis: TestPortcullis): Promise<number> {
  const stats = (
    await adminRequest(portcullis.adminUrl, '/stats?filter=^listener_manager.listener_modified$')
  ).body;
  return Number(/listener_modified: (\d+)/.exec(stats)?.[1] ?? Number.NaN);
}

for (const adsApiType of ['DELTA_GRPC', 'GRPC'] as const) {
  describe(`ECDS over ADS (${adsApiType})`, () => {
    let upstream: EchoUpstream;
    let portcullis: TestPortcullis;

    before(async () => {
      upstream = await startEchoUpstream({ id: 'ecds' });
      portcullis = await startPortcullis(
        {
          routes: [{ from: `https://${HOST}`, to: upstream.url, allow_public_unauthenticated_access: true }],
        },
        { adsApiType, afterCompile: withEcdsFilter },
      );
    });

    after(async () => {
      await portcullis?.stop();
      await upstream?.stop();
    });

    test('the default config serves until the overlay names the filter; each overlay change applies without a build or a drain', async () => {
      assert.equal(await status(portcullis), 200);
      assert.equal(await status(portcullis, { 'x-a': '1' }), 200, 'the default config has no rules');
      const modified = await listenerModifications(portcullis);
      const version = portcullis.running.store.current()?.version;
      const timings: number[] = [];
      for (const [denied, allowed] of [
        ['x-a', 'x-b'],
        ['x-b', 'x-a'],
      ] as const) {
        const started = performance.now();
        assert.ok(
          portcullis.running.store.overlay(new Map([[FILTER, denyHeaderFilterConfig(FILTER, denied)]])),
          'the overlay changed what is served',
        );
        await waitFor(async () => (await status(portcullis, { [denied]: '1' })) === 403, {
          what: `requests with ${denied} to be refused`,
          timeoutMs: 10_000,
        });
        timings.push(Math.round(performance.now() - started));
        assert.equal(await status(portcullis, { [allowed]: '1' }), 200);
        assert.equal(await status(portcullis), 200);
      }
      assert.notEqual(portcullis.running.store.current()?.version, version, 'served, not built');
      assert.equal(portcullis.running.reloader.current().reloads, 1, 'no build ran: only the first load');
      assert.equal(await listenerModifications(portcullis), modified, 'no listener was modified (no drain)');
      console.log(`# ECDS overlay (${adsApiType}): change to Envoy enforcing it in ${timings.join(', ')} ms`);
    });

    test('a config reload keeps the overlay in force', async () => {
      portcullis.writeConfig({
        routes: [
          { from: `https://${HOST}`, to: upstream.url, allow_public_unauthenticated_access: true },
          { from: 'https://other.ecds.test', to: upstream.url, allow_public_unauthenticated_access: true },
        ],
      });
      await waitFor(
        async () => (await proxyRequest(portcullis.proxyPort, 'other.ecds.test', '/')).status === 200,
        {
          what: 'the reloaded config to serve',
          timeoutMs: 15_000,
        },
      );
      assert.equal(
        await status(portcullis, { 'x-b': '1' }),
        403,
        'the overlay of the last test still refuses x-b',
      );
      assert.equal(await status(portcullis, { 'x-a': '1' }), 200);
    });
  });
}
