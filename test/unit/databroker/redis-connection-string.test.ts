import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisConnectionString, redactRedisUrl } from '../../../src/shared/redis-url.js';
import { reconnectDelay } from '../../../src/databroker/redis/clients.js';

describe('databroker_storage_connection_string', () => {
  it('reads one server with credentials, TLS and the database', () => {
    assert.deepEqual(parseRedisConnectionString('redis://127.0.0.1:6380'), {
      kind: 'single',
      host: '127.0.0.1',
      port: 6380,
      database: 0,
      tls: false,
      username: undefined,
      password: undefined,
      display: 'redis://127.0.0.1:6380',
    });
    const tls = parseRedisConnectionString('rediss://app:s%40cret@redis.example:7000/?db=3');
    assert.equal(tls.kind, 'single');
    assert.equal(tls.tls, true);
    assert.equal(tls.username, 'app');
    assert.equal(tls.password, 's@cret');
    assert.ok(
      tls.kind === 'single' && tls.database === 3 && tls.port === 7000 && tls.host === 'redis.example',
    );
    assert.ok(!tls.display.includes('cret'));
    const path = parseRedisConnectionString('redis://h/5');
    assert.ok(path.kind === 'single' && path.database === 5 && path.port === 6379);
    const v6 = parseRedisConnectionString('redis://[::1]:6390');
    assert.ok(v6.kind === 'single' && v6.host === '::1' && v6.port === 6390);
  });

  it('reads Sentinel host lists and the master name', () => {
    for (const scheme of ['redis+sentinel', 'redis-sentinel']) {
      const target = parseRedisConnectionString(`${scheme}://:pw@a:26380,b,[::1]:26381/mymaster`);
      assert.equal(target.kind, 'sentinel');
      assert.ok(target.kind === 'sentinel');
      assert.equal(target.master, 'mymaster');
      assert.deepEqual(target.nodes, [
        { host: 'a', port: 26380 },
        { host: 'b', port: 26379 },
        { host: '::1', port: 26381 },
      ]);
      assert.equal(target.password, 'pw');
      assert.equal(target.display, `${scheme}://:***@a:26380,b,[::1]:26381/mymaster`);
    }
    assert.equal(parseRedisConnectionString('rediss+sentinel://a/m').tls, true);
  });

  it('reads Cluster host lists', () => {
    const target = parseRedisConnectionString('redis+cluster://u:p@n1:7000,n2:7001,n3');
    assert.ok(target.kind === 'cluster');
    assert.deepEqual(target.nodes, [
      { host: 'n1', port: 7000 },
      { host: 'n2', port: 7001 },
      { host: 'n3', port: 6379 },
    ]);
    assert.equal(target.username, 'u');
  });

  it('refuses bad strings naming the setting, never the password', () => {
    const bad = [
      'http://:hunter2@h',
      'redis://:hunter2@',
      'redis://:hunter2@h:99999',
      'redis://:hunter2@h?db=x',
      'redis://:hunter2@h/1?db=2',
      'redis://:hunter2@a,b',
      'redis+sentinel://:hunter2@a,b',
      'redis+sentinel://:hunter2@a/m/x',
      'redis+cluster://:hunter2@a,,b',
      ':hunter2@nothing',
      'hunter2',
    ];
    for (const text of bad) {
      assert.throws(
        () => parseRedisConnectionString(text),
        (err: unknown) =>
          err instanceof RangeError &&
          err.message.startsWith('databroker_storage_connection_string: ') &&
          !err.message.includes('hunter2'),
        text,
      );
    }
  });

  it('redacts the password for logs', () => {
    assert.equal(redactRedisUrl('redis://u:hunter2@h:1/2'), 'redis://u:***@h:1/2');
    assert.equal(redactRedisUrl('redis://h'), 'redis://h');
    assert.equal(redactRedisUrl('not a url hunter2'), '(not a URL)');
  });
});

describe('reconnectDelay', () => {
  it('grows from 50 ms, is capped at 2 s and jittered down to half', () => {
    assert.equal(
      reconnectDelay(0, () => 1),
      50,
    );
    assert.equal(
      reconnectDelay(1, () => 1),
      100,
    );
    assert.equal(
      reconnectDelay(30, () => 1),
      2_000,
    );
    assert.equal(
      reconnectDelay(30, () => 0),
      1_000,
    );
    assert.equal(
      reconnectDelay(1_000_000, () => 0.5),
      1_500,
    );
  });
});
