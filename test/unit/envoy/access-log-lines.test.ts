// Envoy's output as the supervisor handles it (envoy/log-lines.ts, envoy/supervisor.ts): an
// access-log line on stdout becomes one `request` record holding only the fields Envoy had a value
// for; other stdout lines, Envoy's own log on stderr and JSON without the marker stay Envoy output;
// Envoy's argv is logged at debug, never info; and the level a restarted Envoy gets follows
// `setLogLevel`. A shell script stands in for Envoy, so no Envoy runs here.
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { envoyLevelFor, parseAccessLogLine } from '../../../src/envoy/log-lines.js';
import { EnvoySupervisor } from '../../../src/envoy/supervisor.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { waitFor } from '../../support/wait.js';

const ACCESS_LINE = JSON.stringify({
  log: 'access',
  method: 'GET',
  host: 'app.test',
  path: '/page',
  status: 200,
  duration_ms: 3,
  response_flags: '-',
  upstream_host: '10.0.0.1:8080',
  upstream_cluster: 'route-1',
  request_id: 'req-1',
  user: 'user-ada',
  email: null,
});

test('parseAccessLogLine keeps the known fields of a marked line and nothing else', () => {
  assert.deepEqual(parseAccessLogLine(ACCESS_LINE), {
    method: 'GET',
    host: 'app.test',
    path: '/page',
    status: 200,
    duration_ms: 3,
    upstream_host: '10.0.0.1:8080',
    upstream_cluster: 'route-1',
    request_id: 'req-1',
    user: 'user-ada',
  });
  assert.equal(parseAccessLogLine('{"method":"GET","status":200}'), undefined, 'no marker: not ours');
  assert.equal(parseAccessLogLine('{"log":"access"'), undefined, 'cut short');
  assert.equal(parseAccessLogLine('["log","access"]'), undefined);
  assert.equal(parseAccessLogLine('info|main|starting'), undefined);
  assert.equal(parseAccessLogLine(''), undefined);
});

test("envoyLevelFor names Portcullis's levels in Envoy's words", () => {
  assert.equal(envoyLevelFor('trace'), 'trace');
  assert.equal(envoyLevelFor('debug'), 'debug');
  assert.equal(envoyLevelFor('info'), 'info');
  assert.equal(envoyLevelFor('warn'), 'warning');
  assert.equal(envoyLevelFor('error'), 'error');
  assert.equal(envoyLevelFor('fatal'), 'critical');
  assert.equal(envoyLevelFor('critical'), 'critical');
  assert.equal(envoyLevelFor('silent'), 'off');
  assert.equal(envoyLevelFor('off'), 'off');
});

test('the supervisor logs each access line once as `request`, other output as Envoy lines, argv at debug', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-fake-envoy-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, 'envoy');
  // Prints its arguments' log level, an access line, a JSON line that is not one, a raw line and
  // one of Envoy's own log lines, then waits to be stopped.
  writeFileSync(
    binary,
    [
      '#!/bin/sh',
      `echo '${ACCESS_LINE}'`,
      `echo '{"log":"other","status":1}'`,
      'echo "raw output"',
      'echo "warning|config|initial fetch timed out" >&2',
      'echo "args: $*" >&2',
      'exec sleep 30',
      '',
    ].join('\n'),
  );
  chmodSync(binary, 0o755);
  const logger = recordingLogger();
  const supervisor = new EnvoySupervisor({
    binary,
    workDir: dir,
    bootstrapPath: join(dir, 'bootstrap.json'),
    logger,
    logLevel: 'error',
    hotRestart: 'disabled',
    restart: false,
  });
  await supervisor.start();
  after(() => supervisor.stop({ killAfterMs: 1000 }));
  await waitFor(async () => logger.records.some((r) => r.msg?.startsWith('args: ')), {
    what: 'the fake Envoy to print its arguments',
  });
  await waitFor(async () => logger.records.some((r) => r.msg === 'raw output'), {
    what: 'the stdout lines',
  });
  const requests = logger.records.filter((r) => r.msg === 'request');
  assert.equal(requests.length, 1, 'one access line, one record');
  assert.equal(requests[0]?.level, 'info');
  assert.deepEqual(requests[0]?.obj, parseAccessLogLine(ACCESS_LINE));
  const other = logger.records.find((r) => r.msg === '{"log":"other","status":1}');
  assert.equal(other?.level, 'info', 'JSON without the marker is Envoy output, logged as it came');
  assert.equal(logger.records.find((r) => r.msg === 'initial fetch timed out')?.level, 'warn');
  const argsLine = logger.records.find((r) => r.msg?.startsWith('args: '))?.msg ?? '';
  assert.match(argsLine, /--log-level error /, 'the level given at start');
  const started = logger.records.filter((r) => r.msg === 'Envoy started');
  assert.deepEqual(
    started.map((r) => r.level),
    ['debug'],
    "Envoy's argv is a debug line",
  );
  assert.ok('args' in (started[0]?.obj ?? {}));
  assert.equal(supervisor.logLevel, 'error');
  // No admin answers here: the level is only recorded, and the next Envoy starts with it.
  await supervisor.setLogLevel('debug');
  await supervisor.stop({ killAfterMs: 1000 });
  await supervisor.start();
  await waitFor(async () => logger.records.some((r) => /^args: .*--log-level debug /.test(r.msg ?? '')), {
    what: 'the next Envoy to start at the new level',
  });
});
