// Access log and log levels through a real Envoy: a request appears exactly once in the process
// log (`msg: "request"`) with its method, host, path without the query, status, duration,
// upstream, request id and, for a signed-in request, the user's id and email (from ext_authz
// dynamic metadata); an anonymous one has no user. A reload that lowers `log_level` to debug makes
// debug lines appear, and Envoy's level follows `log_level` (info runs Envoy at warning) or
// `proxy_log_level`, as Envoy's admin `/logging` reports. Sessions are written into the store.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis, adaSession } from '../support/portcullis.js';
import { waitFor } from '../support/wait.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { createLogger, type LogRecord } from '../../src/shared/logger.js';

const ada = adaSession({ id: 'session-ada-log' });

let upstream: EchoUpstream;

before(async () => {
  upstream = await startEchoUpstream({ id: 'up' });
});

after(async () => {
  await upstream?.stop();
});

/** The `request` records for `requestId`, once the access log has shown it. */
async function requestRecords(logs: readonly LogRecord[], requestId: string): Promise<LogRecord[]> {
  return waitFor(
    async () => {
      const found = logs.filter(
        (r) => r.msg === 'request' && (r.obj as { request_id?: string }).request_id === requestId,
      );
      return found.length > 0 ? found : undefined;
    },
    { what: `the access-log line of ${requestId}`, timeoutMs: 10_000 },
  );
}

describe('access log', () => {
  let portcullis: TestPortcullis;

  before(async () => {
    portcullis = await startPortcullis({
      routes: [
        { from: 'https://protected.test', to: upstream.url, allowed_users: ['ada@example.com'] },
        { from: 'https://public.test', to: upstream.url, allow_public_unauthenticated_access: true },
      ],
    });
    await portcullis.running.sessions.put(ada);
  });

  after(async () => {
    await portcullis?.stop();
  });

  test('a signed-in request is logged once with its fields and the user', async () => {
    const cookie = `_portcullis=${portcullis.running.authorize.handles().issue(ada.id)}`;
    const response = await proxyRequest(portcullis.proxyPort, 'protected.test', '/page?code=secret', {
      headers: { cookie, 'x-request-id': 'access-log-1', accept: 'application/json' },
    });
    assert.equal(response.status, 200, response.body);
    const [record, ...more] = await requestRecords(portcullis.logs, 'access-log-1');
    assert.ok(record);
    assert.equal(record.level, 'info');
    const fields = record.obj as Record<string, unknown>;
    assert.equal(fields.method, 'GET');
    assert.equal(fields.host, 'protected.test');
    assert.equal(fields.path, '/page', 'the query is not logged');
    assert.equal(fields.status, 200);
    assert.equal(typeof fields.duration_ms, 'number');
    assert.equal(fields.upstream_host, new URL(upstream.url).host);
    assert.match(String(fields.upstream_cluster), /\S/);
    assert.equal(fields.user, 'user-ada');
    assert.equal(fields.email, 'ada@example.com');
    assert.equal(fields.decided_by, 'portcullis', 'the fast path is on by default; ext_authz was asked');
    assert.ok(!JSON.stringify(fields).includes('secret'), 'nothing of the query anywhere');
    // Lines arrive in order: once a later request's line is in, a duplicate of the first would be too.
    const later = await proxyRequest(portcullis.proxyPort, 'public.test', '/next', {
      headers: { 'x-request-id': 'access-log-2' },
    });
    assert.equal(later.status, 200);
    const [anonymous] = await requestRecords(portcullis.logs, 'access-log-2');
    assert.equal(more.length, 0);
    assert.equal((await requestRecords(portcullis.logs, 'access-log-1')).length, 1, 'logged exactly once');
    const anonymousFields = anonymous?.obj as Record<string, unknown>;
    assert.equal(anonymousFields.user, undefined, 'an anonymous request has no user');
    assert.equal(anonymousFields.email, undefined);
    assert.equal(anonymousFields.status, 200);
  });

  test('a denied request is logged too, with the status Envoy answered', async () => {
    const response = await proxyRequest(portcullis.proxyPort, 'protected.test', '/', {
      headers: { 'x-request-id': 'access-log-3', accept: 'application/json' },
    });
    assert.equal(response.status, 401);
    const [record] = await requestRecords(portcullis.logs, 'access-log-3');
    const fields = record?.obj as Record<string, unknown>;
    assert.equal(fields.status, 401);
    assert.equal(fields.upstream_host, undefined, 'answered by ext_authz: no upstream');
  });
});

/** Envoy's logger levels from admin `/logging` (`  name: level` lines), deduplicated. */
async function envoyLevels(adminUrl: string): Promise<string[]> {
  const body = (await adminRequest(adminUrl, '/logging', { method: 'POST' })).body;
  return [...new Set([...body.matchAll(/^\s+[\w.-]+: (\w+)$/gm)].map((m) => m[1] as string))];
}

describe('log levels on reload', () => {
  let portcullis: TestPortcullis;
  const lines: { level: number; msg?: string }[] = [];

  before(async () => {
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    portcullis = await startPortcullis(
      {
        log_level: 'info',
        proxy_log_level: undefined,
        routes: [
          { from: 'https://public.test', to: upstream.url, allow_public_unauthenticated_access: true },
        ],
      },
      { logger },
    );
  });

  after(async () => {
    await portcullis?.stop();
  });

  test('log_level debug on reload: debug lines appear and Envoy follows; proxy_log_level then wins', async () => {
    assert.deepEqual(await envoyLevels(portcullis.adminUrl), ['warning'], 'info runs Envoy at warning');
    assert.equal(lines.filter((line) => line.level <= 20).length, 0, 'no debug line at log_level info');
    const config = portcullis.baseConfig();
    portcullis.writeConfig({ ...config, log_level: 'debug', proxy_log_level: undefined });
    await waitFor(async () => lines.some((line) => line.level === 20), {
      what: 'a debug line after lowering log_level',
      timeoutMs: 15_000,
    });
    // The secret-bearing loggers stay at info (issue 33 item 8); every other one follows to debug.
    await waitFor(async () => (await envoyLevels(portcullis.adminUrl)).sort().join() === 'debug,info', {
      what: "Envoy's loggers at debug, the secret-bearing ones at info",
      timeoutMs: 15_000,
    });
    portcullis.writeConfig({ ...config, log_level: 'debug', proxy_log_level: 'error' });
    await waitFor(async () => (await envoyLevels(portcullis.adminUrl)).join() === 'error', {
      what: "Envoy's loggers at proxy_log_level error",
      timeoutMs: 15_000,
    });
    assert.ok(lines.some((line) => line.msg === "Envoy's log level changed"));
  });
});
