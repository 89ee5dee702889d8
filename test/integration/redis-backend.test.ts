import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from 'redis';
import { createRedisBackend } from '../../src/databroker/redis/redis-backend.js';
import type { RedisBackend } from '../../src/databroker/redis/redis-backend.js';
import type { RecordChange } from '../../src/session/records.js';
import { StoreUnavailableError } from '../../src/session/records.js';
import { recordingLogger, silentLogger } from '../../src/shared/logger.js';
import { freePort } from '../support/ports.js';
import { describeRecordBackend } from '../support/record-backend-conformance.js';
import { failOnLingeringHandles } from '../support/lingering-handles.js';
import { startRedisCluster, startRedisSentinel, startRedisServer } from '../support/redis-server.js';
import type { TestRedisSentinel, TestRedisServer } from '../support/redis-server.js';
import { waitFor } from '../support/wait.js';

let server: TestRedisServer;
/** A Sentinel watching `server`, started by the first test that uses it. */
let sentinel: TestRedisSentinel | undefined;
/** A one-node Cluster, started by the first test that uses it. */
let cluster: (TestRedisServer & { readonly clusterUrl: string }) | undefined;
let prefixes = 0;
before(async () => {
  server = await startRedisServer();
});
// Once (CI, a loaded machine) every test here passed and the file then hung until the 300 s timeout.
failOnLingeringHandles('redis-backend.test.ts');
after(async () => {
  await sentinel?.close();
  await cluster?.close();
  await server.close();
});

/** A connected backend on the test server; each test gets its own key prefix (an empty store). */
async function openBackend(keyPrefix: string, url = server.url): Promise<RedisBackend> {
  const backend = createRedisBackend({ url, logger: silentLogger, keyPrefix });
  await backend.connect();
  return backend;
}

/** Every value under `keyPrefix` as Redis holds it (hash field values and strings). */
async function rawValues(keyPrefix: string): Promise<string[]> {
  const raw = createClient({ url: server.url });
  await raw.connect();
  try {
    const values: string[] = [];
    for await (const keys of raw.scanIterator({ MATCH: `${keyPrefix}*`, COUNT: 1000 })) {
      for (const key of keys) {
        const type = await raw.type(key);
        if (type === 'hash') values.push(...Object.values(await raw.hGetAll(key)));
        else if (type === 'string') values.push((await raw.get(key)) ?? '');
        else if (type === 'zset') values.push(...(await raw.zRange(key, 0, -1)));
      }
    }
    return values;
  } finally {
    raw.destroy();
  }
}

/** The suite through `url()`, with a fresh key prefix per test. */
const underTest =
  (url: () => Promise<string>, withRawValues = false) =>
  async () => {
    prefixes += 1;
    const keyPrefix = `t${prefixes}-${process.pid}:`;
    const backend = await openBackend(keyPrefix, await url());
    const others: RedisBackend[] = [];
    return {
      backend,
      second: async () => {
        const other = await openBackend(keyPrefix, await url());
        others.push(other);
        return other;
      },
      ...(withRawValues ? { rawValues: () => rawValues(keyPrefix) } : {}),
      close: async () => {
        await Promise.all([backend, ...others].map((b) => b.close()));
      },
    };
  };

describeRecordBackend(
  'redis',
  underTest(async () => server.url),
);
describeRecordBackend(
  'redis through Sentinel',
  underTest(async () => {
    sentinel ??= await startRedisSentinel(server);
    return sentinel.url;
  }),
);

describeRecordBackend(
  'redis Cluster (one node)',
  underTest(async () => {
    cluster ??= await startRedisCluster();
    return cluster.clusterUrl;
  }),
);

describe('Redis backend', () => {
  it('stores exactly what it is given (sealing is the layer above)', async () => {
    const backend = await openBackend('raw:');
    try {
      await backend.put('session', 'id-1', 'opaque-data-1');
      await backend.put('session', 'id-2', 'opaque-data-2', { ttlMs: 60_000 });
      const values = await rawValues('raw:');
      assert.ok(values.includes('opaque-data-1') && values.includes('opaque-data-2'));
      const data = values.filter((v) => v.startsWith('opaque-'));
      assert.deepEqual(data.sort(), ['opaque-data-1', 'opaque-data-2']);
    } finally {
      await backend.close();
    }
  });

  it('rejects empty, over-long and control-character types and ids', async () => {
    const backend = await openBackend('names:');
    try {
      for (const [type, id] of [
        ['', 'a'],
        ['session', ''],
        ['x'.repeat(257), 'a'],
        ['session', 'y'.repeat(257)],
        ['ses\nsion', 'a'],
        ['session', 'a\u0000b'],
        ['session', 'a\u007f'],
        ['{session}', 'a'],
      ] as const) {
        await assert.rejects(
          backend.get(type, id),
          RangeError,
          `${JSON.stringify(type)}/${JSON.stringify(id)}`,
        );
        await assert.rejects(backend.put(type, id, 'v'), RangeError);
      }
      await assert.rejects(backend.acquireLease('', 1_000), RangeError);
      await assert.rejects(backend.put('session', 'a', 'v', { ttlMs: 0 }), RangeError);
      await assert.rejects(backend.put('session', 'a', 'v', { ifVersion: -1 }), RangeError);
      const long = await backend.put('session', 'z'.repeat(256), 'ids of 256 characters and any text: é {x}');
      assert.equal((await backend.get('session', 'z'.repeat(256)))?.data, long.data);
    } finally {
      await backend.close();
    }
  });

  it('connect() to nothing rejects with StoreUnavailableError in bounded time, without the password', async () => {
    const port = await freePort();
    const backend = createRedisBackend({
      url: `redis://:hunter2@127.0.0.1:${port}`,
      logger: silentLogger,
      connectTimeoutMs: 800,
    });
    const started = Date.now();
    await assert.rejects(
      backend.connect(),
      (err: unknown) =>
        err instanceof StoreUnavailableError &&
        err.message.includes(`127.0.0.1:${port}`) &&
        !err.message.includes('hunter2'),
    );
    assert.ok(Date.now() - started < 2_000, `connect gave up after ${Date.now() - started} ms`);
    await assert.rejects(backend.get('session', 'a'), StoreUnavailableError);
    await backend.close();
  });

  it('a password-protected server: credentials from the URL', async () => {
    const locked = await startRedisServer({ extraConfig: ['requirepass s3cret'] });
    try {
      const backend = await openBackend('auth:', locked.url);
      await backend.put('session', 'a', 'v');
      assert.equal((await backend.get('session', 'a'))?.data, 'v');
      await backend.close();
      const wrong = createRedisBackend({
        url: locked.url.replace('s3cret', 'wrong'),
        logger: silentLogger,
        connectTimeoutMs: 800,
      });
      await assert.rejects(
        wrong.connect(),
        (err: unknown) => err instanceof StoreUnavailableError && !String(err).includes('wrong'),
      );
      await wrong.close();
    } finally {
      await locked.close();
    }
  });

  it('builds Sentinel and Cluster clients from their URLs', async () => {
    for (const url of [
      'redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster',
      'redis+cluster://127.0.0.1:1,127.0.0.1:2',
    ]) {
      const backend = createRedisBackend({ url, logger: silentLogger });
      await assert.rejects(backend.get('session', 'a'), StoreUnavailableError);
      await backend.close();
    }
  });
});

describe('Redis backend while Redis is down', () => {
  for (const viaSentinel of [false, true]) {
    it(`fails fast, queues nothing, reports lost/resumed and reconnects by itself${viaSentinel ? ' (Sentinel)' : ''}`, async (t) => {
      const own = await startRedisServer();
      const ownSentinel = viaSentinel ? await startRedisSentinel(own) : undefined;
      const url = ownSentinel?.url ?? own.url;
      const logger = recordingLogger();
      const backend = createRedisBackend({ url, logger, keyPrefix: 'outage:' });
      await backend.connect();
      const watcher = await openBackend('outage:', url);
      const states: RecordChange['kind'][] = [];
      const changes: RecordChange[] = [];
      watcher.watch((change) => {
        changes.push(change);
        if (change.kind === 'lost' || change.kind === 'resumed') states.push(change.kind);
      });
      try {
        await backend.put('session', 'kept', 'v');
        await own.stop();
        await waitFor(async () => states.includes('lost'), {
          what: 'the feed to report lost',
          timeoutMs: 5_000,
        });

        const calls: Array<[string, () => Promise<unknown>]> = [
          ['get', () => backend.get('session', 'kept')],
          ['put', () => backend.put('session', 'kept', 'v2')],
          ['delete', () => backend.delete('session', 'kept')],
          ['query', () => backend.query('session')],
          ['acquireLease', () => backend.acquireLease('lease', 1_000)],
          ['releaseLease', () => backend.releaseLease('lease', 'token')],
          ['ping', () => backend.ping()],
        ];
        for (const [name, call] of calls) {
          const started = performance.now();
          await assert.rejects(call(), StoreUnavailableError, name);
          const elapsed = performance.now() - started;
          assert.ok(elapsed < 1_000, `${name} rejected after ${elapsed.toFixed(0)} ms`);
        }
        const started = performance.now();
        const burst = await Promise.allSettled(
          Array.from({ length: 1_000 }, (_, i) => backend.get('session', `k${i}`)),
        );
        const burstMs = performance.now() - started;
        assert.ok(burst.every((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError));
        assert.ok(burstMs < 1_000, `1,000 calls while down took ${burstMs.toFixed(0)} ms`);
        const warnings = logger.records.filter((r) => r.level === 'warn').length;
        assert.ok(warnings >= 1 && warnings <= 2, `one warning per connection state change, got ${warnings}`);

        await own.start();
        await waitFor(async () => states.includes('resumed'), {
          what: 'the feed to report resumed',
          timeoutMs: 10_000,
        });
        assert.deepEqual(states, ['lost', 'resumed']);
        await waitFor(async () => (await backend.ping().then(() => true)) || undefined, {
          what: 'the command connection to come back',
          timeoutMs: 10_000,
        });
        assert.equal(
          await backend.get('session', 'kept'),
          undefined,
          'the restarted server is empty (no persistence)',
        );
        const put = await backend.put('session', 'after', 'v');
        await waitFor(
          async () => changes.some((c) => c.kind === 'put' && c.id === 'after' && c.version === put.version),
          {
            what: 'the feed to carry changes again',
            timeoutMs: 5_000,
          },
        );
        t.diagnostic(`outage: 1,000 calls rejected in ${burstMs.toFixed(0)} ms`);
      } finally {
        await backend.close();
        await watcher.close();
        await ownSentinel?.close();
        await own.close();
      }
    });
  }
});

describe('Redis backend while Redis hangs (issue 33 item 4)', () => {
  for (const viaSentinel of [false, true]) {
    it(`SIGSTOP with the connections open: the idle feed reports lost within ~1.5 s, calls fail fast; SIGCONT: resumed${viaSentinel ? ' (Sentinel)' : ''}`, async (t) => {
      const own = await startRedisServer();
      const ownSentinel = viaSentinel ? await startRedisSentinel(own) : undefined;
      const logger = recordingLogger();
      const backend = createRedisBackend({ url: ownSentinel?.url ?? own.url, logger, keyPrefix: 'hang:' });
      const states: Array<{ kind: RecordChange['kind']; at: number }> = [];
      try {
        await backend.connect();
        backend.watch((change) => {
          if (change.kind === 'lost' || change.kind === 'resumed')
            states.push({ kind: change.kind, at: performance.now() });
        });
        await backend.put('session', 'kept', 'v');
        own.pause();
        const pausedAt = performance.now();
        // No traffic at all: only the PINGs on the connections can notice the hang.
        await waitFor(async () => states.some((s) => s.kind === 'lost'), {
          what: 'the feed to report lost while Redis hangs',
          timeoutMs: 5_000,
          intervalMs: 20,
        });
        const lostMs = (states[0]?.at ?? 0) - pausedAt;
        assert.ok(lostMs < 2_500, `lost ${lostMs.toFixed(0)} ms after the hang began`);
        for (const [name, call] of [
          ['get', () => backend.get('session', 'kept')],
          ['ping', () => backend.ping()],
        ] as const) {
          const started = performance.now();
          await assert.rejects(call(), StoreUnavailableError, name);
          const elapsed = performance.now() - started;
          assert.ok(elapsed < 1_000, `${name} rejected after ${elapsed.toFixed(0)} ms`);
        }
        assert.ok(
          logger.records.some((r) => r.level === 'warn' && /not answering/.test(r.msg ?? '')),
          'the hang is logged',
        );

        own.resume();
        const resumedAt = performance.now();
        await waitFor(async () => states.some((s) => s.kind === 'resumed'), {
          what: 'the feed to report resumed once Redis runs again',
          timeoutMs: 5_000,
          intervalMs: 20,
        });
        const backMs = (states.find((s) => s.kind === 'resumed')?.at ?? 0) - resumedAt;
        assert.deepEqual(
          states.map((s) => s.kind),
          ['lost', 'resumed'],
        );
        await waitFor(async () => (await backend.get('session', 'kept'))?.data === 'v', {
          what: 'commands to work again',
          timeoutMs: 5_000,
        });
        t.diagnostic(
          `hang${viaSentinel ? ' (Sentinel)' : ''}: lost ${lostMs.toFixed(0)} ms after SIGSTOP (no traffic); resumed ${backMs.toFixed(0)} ms after SIGCONT`,
        );
      } finally {
        own.resume();
        await backend.close();
        await ownSentinel?.close();
        await own.close();
      }
    });
  }

  it('a command that times out reports lost itself, without waiting for a PING', async () => {
    const own = await startRedisServer();
    const backend = createRedisBackend({ url: own.url, logger: silentLogger, keyPrefix: 'hang2:' });
    const states: RecordChange['kind'][] = [];
    try {
      await backend.connect();
      backend.watch((change) => states.push(change.kind));
      own.pause();
      const started = performance.now();
      await assert.rejects(backend.get('session', 'x'), StoreUnavailableError);
      const elapsed = performance.now() - started;
      assert.deepEqual(states, ['lost'], `after a get that failed in ${elapsed.toFixed(0)} ms`);
      assert.ok(elapsed < 1_000, `the get failed after ${elapsed.toFixed(0)} ms`);
    } finally {
      own.resume();
      await backend.close();
      await own.close();
    }
  });
});

describe('Redis backend latency on loopback', () => {
  it('measures get and put, p50 and p99 over 10,000 sequential ops each', async (t) => {
    const backend = await openBackend('latency:');
    try {
      const percentiles = (samples: number[]): { p50: number; p99: number } => {
        const sorted = [...samples].sort((a, b) => a - b);
        const at = (q: number): number =>
          sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
        return { p50: at(0.5), p99: at(0.99) };
      };
      const measure = async (op: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number }> => {
        const samples: number[] = [];
        for (let i = 0; i < 10_000; i += 1) {
          const started = performance.now();
          await op(i);
          samples.push(performance.now() - started);
        }
        return percentiles(samples);
      };
      const data = 'x'.repeat(600);
      const put = await measure((i) => backend.put('session', `s${i % 1_000}`, data, { ttlMs: 60_000 }));
      let found = 0;
      const get = await measure(async (i) => {
        if ((await backend.get('session', `s${i % 1_000}`))?.data === data) found += 1;
      });
      assert.equal(found, 10_000, 'every get read the record back');
      const show = (p: { p50: number; p99: number }): string =>
        `p50 ${p.p50.toFixed(3)} ms, p99 ${p.p99.toFixed(3)} ms`;
      t.diagnostic(`redis put: ${show(put)}; get: ${show(get)}`);
      assert.ok(get.p99 < 50 && put.p99 < 50, 'loopback operations finish well within the command timeout');
    } finally {
      await backend.close();
    }
  });
});
