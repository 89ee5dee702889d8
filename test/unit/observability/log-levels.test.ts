// Log levels on reload (observability/log-levels.ts): each accepted config sets the process logger's
// level and Envoy's, through the supervisor's admin call; unchanged levels call nothing; an
// unset proxy_log_level follows log_level in Envoy's words, except that info runs Envoy at warning
// (its info start-up dump is hundreds of lines); a refused admin call is a warning, not a failure.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EnvoyLogLevel } from '../../../src/envoy/log-lines.js';
import type { GoodBuild } from '../../../src/runtime/build-pipeline.js';
import { envoyLogLevel, logLevelSubscriber } from '../../../src/observability/log-levels.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import type { IRObservability } from '../../../src/ir/services.js';

/** The config's `log_level` and `proxy_log_level`, as the IR carries them. */
interface Levels {
  readonly log_level: IRObservability['logLevel'];
  readonly proxy_log_level?: NonNullable<IRObservability['proxyLogLevel']>;
}
const observability = (levels: Levels): Pick<IRObservability, 'logLevel' | 'proxyLogLevel'> => ({
  logLevel: levels.log_level,
  proxyLogLevel: levels.proxy_log_level,
});
const build = (levels: Levels): GoodBuild =>
  ({ ir: { observability: observability(levels) } }) as unknown as GoodBuild;

/** A supervisor stand-in that records each level it is asked for. */
function fakeEnvoy(
  start: EnvoyLogLevel,
  fail = false,
): {
  logLevel: EnvoyLogLevel;
  capsSensitiveComponents: boolean;
  asked: EnvoyLogLevel[];
  setLogLevel(level: EnvoyLogLevel, caps: boolean): Promise<void>;
} {
  const envoy = {
    logLevel: start,
    capsSensitiveComponents: true,
    asked: [] as EnvoyLogLevel[],
    setLogLevel(level: EnvoyLogLevel, caps: boolean): Promise<void> {
      envoy.asked.push(level);
      envoy.logLevel = level;
      envoy.capsSensitiveComponents = caps;
      return fail ? Promise.reject(new Error('admin refused')) : Promise.resolve();
    },
  };
  return envoy;
}

test("Envoy's level: proxy_log_level, else log_level in Envoy's words, info as warning", () => {
  assert.equal(envoyLogLevel(observability({ log_level: 'info' })), 'warning');
  assert.equal(envoyLogLevel(observability({ log_level: 'debug' })), 'debug');
  assert.equal(envoyLogLevel(observability({ log_level: 'trace' })), 'trace');
  assert.equal(envoyLogLevel(observability({ log_level: 'warn' })), 'warning');
  assert.equal(envoyLogLevel(observability({ log_level: 'fatal' })), 'critical');
  assert.equal(envoyLogLevel(observability({ log_level: 'silent' })), 'off');
  assert.equal(envoyLogLevel(observability({ log_level: 'info', proxy_log_level: 'info' })), 'info');
  assert.equal(envoyLogLevel(observability({ log_level: 'debug', proxy_log_level: 'warn' })), 'warning');
  assert.equal(envoyLogLevel(observability({ log_level: 'error', proxy_log_level: 'trace' })), 'trace');
});

test('each config sets both levels once; an unchanged level calls nothing', async () => {
  const root = { level: 'info' };
  const envoy = fakeEnvoy('warning');
  const log = recordingLogger();
  const subscriber = logLevelSubscriber(root, envoy, log);
  subscriber.publish(build({ log_level: 'info' }));
  assert.equal(root.level, 'info');
  assert.deepEqual(envoy.asked, [], 'nothing changed');
  subscriber.publish(build({ log_level: 'debug' }));
  assert.equal(root.level, 'debug');
  assert.deepEqual(envoy.asked, ['debug']);
  assert.equal(
    envoy.capsSensitiveComponents,
    true,
    'debug from log_level keeps secret-bearing loggers at info',
  );
  subscriber.publish(build({ log_level: 'debug', proxy_log_level: 'error' }));
  assert.equal(root.level, 'debug');
  assert.deepEqual(envoy.asked, ['debug', 'error']);
  subscriber.publish(build({ log_level: 'debug', proxy_log_level: 'debug' }));
  assert.deepEqual(envoy.asked, ['debug', 'error', 'debug']);
  assert.equal(envoy.capsSensitiveComponents, false, 'proxy_log_level: debug asks for every logger');
  await Promise.resolve();
  assert.ok(log.records.some((r) => r.msg === 'log_level changed' && r.level === 'info'));
  assert.ok(log.records.some((r) => r.msg === "Envoy's log level changed"));
});

test('a refused admin call is logged as a warning and the build goes on; no Envoy, no call', async () => {
  const log = recordingLogger();
  const envoy = fakeEnvoy('warning', true);
  logLevelSubscriber({ level: 'info' }, envoy, log).publish(build({ log_level: 'error' }));
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(
    log.records.some((r) => r.level === 'warn' && r.msg === "Envoy's log level could not be changed"),
  );
  const root = { level: 'info' };
  logLevelSubscriber(root, undefined, log).publish(build({ log_level: 'warn' }));
  assert.equal(root.level, 'warn');
  const fake: { level?: string } = {};
  logLevelSubscriber(fake, undefined, log).publish(build({ log_level: 'warn' }));
  assert.equal(fake.level, undefined, 'a logger without a level (a test fake) is left alone');
});
