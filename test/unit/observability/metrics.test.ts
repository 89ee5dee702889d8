// The process's Prometheus series (PortcullisMetrics) and readiness (Readiness), without sockets:
// every series carries the service label, decisions, reloads and the ADS counters move, nothing
// lands in prom-client's global registry, and readiness waits for an Envoy's ACK of listeners and
// routes and a store that answers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { register as globalRegistry } from 'prom-client';
import { PortcullisMetrics } from '../../../src/observability/metrics/portcullis-metrics.js';
import { Readiness } from '../../../src/observability/metrics/readiness.js';
import type { BuildResult } from '../../../src/runtime/build-pipeline.js';
import type { RecordChange } from '../../../src/session/records.js';
import { CLUSTER_TYPE, LISTENER_TYPE, ROUTE_CONFIGURATION_TYPE } from '../../../src/proto/type-urls.js';
import { AdsMetrics } from '../../../src/xds/server/metrics.js';
import type { AdsStreamEvent } from '../../../src/xds/server/events.js';
import { outage } from '../authenticate/failing-store.js';

/** The value of the sample `name{labels}` in `text` (labels as written, in order), or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((row) => row.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('every series carries the service label; decisions and their latency are counted by outcome', async () => {
  const metrics = new PortcullisMetrics();
  metrics.setService('portcullis');
  metrics.decision('allow', 0.0004);
  metrics.decision('allow', 0.002);
  metrics.decision('deny', 0.001);
  metrics.signIn('success');
  metrics.signIn('failure');
  metrics.refresh('ended');
  metrics.signOut();
  metrics.storeError('get');
  const text = await metrics.registry.metrics();
  assert.equal(sample(text, 'portcullis_authz_decisions_total', 'outcome="allow",service="portcullis"'), 2);
  assert.equal(sample(text, 'portcullis_authz_decisions_total', 'outcome="deny",service="portcullis"'), 1);
  assert.equal(
    sample(text, 'portcullis_authz_decisions_total', 'outcome="unavailable",service="portcullis"'),
    0,
  );
  assert.equal(sample(text, 'portcullis_authz_decision_duration_seconds_count', 'service="portcullis"'), 3);
  assert.equal(
    sample(text, 'portcullis_authz_decision_duration_seconds_bucket', 'le="0.0005",service="portcullis"'),
    1,
  );
  assert.equal(sample(text, 'portcullis_sign_ins_total', 'outcome="success",service="portcullis"'), 1);
  assert.equal(sample(text, 'portcullis_sign_ins_total', 'outcome="failure",service="portcullis"'), 1);
  assert.equal(sample(text, 'portcullis_session_refreshes_total', 'outcome="ended",service="portcullis"'), 1);
  assert.equal(sample(text, 'portcullis_session_refreshes_total', 'outcome="kept",service="portcullis"'), 0);
  assert.equal(sample(text, 'portcullis_sign_outs_total', 'service="portcullis"'), 1);
  assert.equal(
    sample(text, 'portcullis_session_store_errors_total', 'operation="get",service="portcullis"'),
    1,
  );
  for (const line of text.split('\n').filter((row) => row !== '' && !row.startsWith('#')))
    assert.match(line, /service="portcullis"/, line);
  assert.equal((await globalRegistry.metrics()).includes('portcullis_'), false, 'not the global registry');
});

test('two instances keep separate series (a registry per process, no shared state)', async () => {
  const a = new PortcullisMetrics();
  const b = new PortcullisMetrics();
  a.setService('portcullis-authorize');
  b.setService('portcullis-proxy');
  a.signOut();
  assert.equal(
    sample(await a.registry.metrics(), 'portcullis_sign_outs_total', 'service="portcullis-authorize"'),
    1,
  );
  assert.equal(
    sample(await b.registry.metrics(), 'portcullis_sign_outs_total', 'service="portcullis-proxy"'),
    0,
  );
});

test('reloads: success and failure counted, duration observed, the active checksum is the one info series', async () => {
  const metrics = new PortcullisMetrics();
  metrics.setService('portcullis');
  const good = (version: string): BuildResult =>
    ({ ok: true, snapshot: { version } }) as unknown as BuildResult;
  const failed = { ok: false, stage: 'parse', problems: [], warnings: [], filesRead: [] } as BuildResult;
  metrics.reloaded(good('aaa111'), 0.02);
  metrics.reloaded(failed, 0.004);
  metrics.reloaded(good('bbb222'), 0.03);
  const text = await metrics.registry.metrics();
  assert.equal(sample(text, 'portcullis_config_reloads_total', 'outcome="success",service="portcullis"'), 2);
  assert.equal(sample(text, 'portcullis_config_reloads_total', 'outcome="failure",service="portcullis"'), 1);
  assert.equal(sample(text, 'portcullis_config_reload_duration_seconds_count', 'service="portcullis"'), 3);
  assert.equal(sample(text, 'portcullis_config_info', 'checksum="bbb222",service="portcullis"'), 1);
  assert.equal(sample(text, 'portcullis_config_info', 'checksum="aaa111",service="portcullis"'), undefined);
});

test('xDS pushes, ACKs and NACKs are read from the ADS counters at each scrape, by type URL', async () => {
  const metrics = new PortcullisMetrics();
  metrics.setService('portcullis');
  const ads = new AdsMetrics();
  metrics.watchAds(() => ads.snapshot());
  ads.responseSent(LISTENER_TYPE);
  ads.responseSent(LISTENER_TYPE);
  ads.ack(LISTENER_TYPE);
  const nack = {
    mode: 'delta',
    nodeId: 'n',
    typeUrl: '',
    nonce: '1',
    rejected: '',
    code: 3,
    message: 'bad',
  } as const;
  ads.nack(LISTENER_TYPE, nack);
  const listener = `type_url="type.googleapis.com/${LISTENER_TYPE}",service="portcullis"`;
  const cluster = `type_url="type.googleapis.com/${CLUSTER_TYPE}",service="portcullis"`;
  let text = await metrics.registry.metrics();
  assert.equal(sample(text, 'portcullis_xds_pushes_total', listener), 2);
  assert.equal(sample(text, 'portcullis_xds_acks_total', listener), 1);
  assert.equal(sample(text, 'portcullis_xds_nacks_total', listener), 1);
  assert.equal(sample(text, 'portcullis_xds_pushes_total', cluster), 0);
  ads.responseSent(LISTENER_TYPE);
  text = await metrics.registry.metrics();
  assert.equal(sample(text, 'portcullis_xds_pushes_total', listener), 3);
});

const acked = (stream: number, type: string): AdsStreamEvent =>
  ({ kind: 'acked', stream, nodeId: 'n', type, version: 'v1' }) as AdsStreamEvent;

test('readiness: not ready until one stream ACKed listeners and routes; then it stays ready', async () => {
  const readiness = new Readiness({ envoy: true });
  const changes: boolean[] = [];
  readiness.onChange((serving) => changes.push(serving));
  assert.deepEqual(await readiness.check(), {
    ready: false,
    checks: { envoy: 'no Envoy has acknowledged a config yet' },
  });
  readiness.observe(acked(1, CLUSTER_TYPE));
  readiness.observe(acked(1, LISTENER_TYPE));
  readiness.observe({ kind: 'closed', stream: 1, nodeId: 'n' });
  readiness.observe(acked(2, ROUTE_CONFIGURATION_TYPE));
  assert.equal(readiness.serving, false, 'listeners of one stream and routes of another are not a config');
  readiness.observe(acked(2, LISTENER_TYPE));
  assert.equal(readiness.serving, true);
  assert.deepEqual(await readiness.check(), { ready: true, checks: { envoy: 'ok' } });
  readiness.observe({ kind: 'pending', stream: 2, nodeId: 'n', type: LISTENER_TYPE } as AdsStreamEvent);
  readiness.observe({ kind: 'closed', stream: 2, nodeId: 'n' });
  assert.equal(readiness.serving, true, 'the first ACK latches');
  assert.deepEqual(changes, [true]);
});

test('readiness: the store must answer ping within the bound; its feed drives the pushed state', async () => {
  let feed: ((change: RecordChange) => void) | undefined;
  let answer: 'ok' | 'fail' | 'hang' = 'fail';
  const store = {
    ping: () =>
      answer === 'ok'
        ? Promise.resolve()
        : answer === 'fail'
          ? Promise.reject(outage())
          : new Promise<void>(() => {}),
    watch: (listener: (change: RecordChange) => void) => {
      feed = listener;
      return () => (feed = undefined);
    },
  };
  const readiness = new Readiness({ envoy: false, store, pingTimeoutMs: 50 });
  const down = await readiness.check();
  assert.equal(down.ready, false);
  assert.match(down.checks['session_store'] ?? '', /^unavailable: .*connection refused/);
  answer = 'hang';
  assert.deepEqual(await readiness.check(), {
    ready: false,
    checks: { session_store: 'no answer within 50 ms' },
  });
  answer = 'ok';
  assert.deepEqual(await readiness.check(), { ready: true, checks: { session_store: 'ok' } });
  const changes: boolean[] = [];
  readiness.onChange((serving) => changes.push(serving));
  assert.equal(readiness.serving, true, 'no Envoy needed where no xDS is served');
  feed?.({ kind: 'lost' });
  assert.equal(readiness.serving, false);
  feed?.({ kind: 'resumed' });
  assert.deepEqual(changes, [false, true]);
  readiness.close();
  assert.equal(feed, undefined, 'close stops following the feed');
});
