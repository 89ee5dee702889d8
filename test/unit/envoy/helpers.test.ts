import assert from 'node:assert/strict';
import { test } from 'node:test';
import { activeRequestsFromStats, adminUrlFromAddress } from '../../../src/envoy/admin.js';
import { MIN_ENVOY_VERSION, compareVersions, parseEnvoyVersion } from '../../../src/envoy/locate.js';
import { parseEnvoyLogLine } from '../../../src/envoy/log-lines.js';
import { envoyCommand } from '../../../src/envoy/process.js';
import { sensitiveComponentCaps } from '../../../src/envoy/log-lines.js';
import { parseClusterHealth } from '../../support/envoy.js';

test('parseEnvoyVersion reads the release from envoy --version output', () => {
  const out =
    '\n.tools/envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE/BoringSSL\n';
  assert.equal(parseEnvoyVersion(out), '1.40.0');
  assert.equal(parseEnvoyVersion('envoy version: abc/1.39.2-dev/Modified/DEBUG/BoringSSL'), '1.39.2');
  assert.equal(parseEnvoyVersion('garbage'), undefined);
});

test('compareVersions orders numerically and gates on MIN_ENVOY_VERSION', () => {
  assert.equal(MIN_ENVOY_VERSION, '1.40.0');
  assert.ok(compareVersions('1.39.9', MIN_ENVOY_VERSION) < 0);
  assert.ok(compareVersions('1.40.0', MIN_ENVOY_VERSION) === 0);
  assert.ok(compareVersions('1.100.0', '1.40.0') > 0);
  assert.ok(compareVersions('2', '1.99.99') > 0);
});

test('parseEnvoyLogLine maps Envoy levels and never throws on odd input', () => {
  assert.deepEqual(parseEnvoyLogLine('warning|config|initial fetch timed out', 'stderr'), {
    level: 'warn',
    component: 'config',
    message: 'initial fetch timed out',
  });
  assert.equal(parseEnvoyLogLine('critical|backtrace|#0 foo', 'stderr').level, 'error');
  assert.equal(parseEnvoyLogLine('trace|http|x|y', 'stderr').message, 'x|y');
  for (const odd of ['', '|', '||', 'info|', 'nonsense|main|x', 'info|bad name|x', '\u0000\uffff']) {
    const line = parseEnvoyLogLine(odd, 'stdout');
    assert.equal(line.component, undefined, odd);
    assert.equal(line.level, 'info');
    assert.equal(line.message, odd);
  }
  assert.equal(parseEnvoyLogLine('plain text', 'stderr').level, 'warn');
});

test('adminUrlFromAddress handles IPv4, IPv6 and half-written files', () => {
  assert.equal(adminUrlFromAddress('127.0.0.1:46011\n'), 'http://127.0.0.1:46011');
  assert.equal(adminUrlFromAddress('::1:9901'), 'http://[::1]:9901');
  assert.equal(adminUrlFromAddress('[::1]:9901'), 'http://[::1]:9901');
  assert.equal(adminUrlFromAddress(''), undefined);
  assert.equal(adminUrlFromAddress('127.0.0.1:'), undefined);
});

test('activeRequestsFromStats sums downstream_rq_active except the admin listener', () => {
  const stats = [
    'http.admin.downstream_rq_active: 1',
    'http.ingress.downstream_rq_active: 2',
    'http.other.thing.downstream_rq_active: 3',
    'http.ingress.downstream_rq_total: 99',
  ].join('\n');
  assert.equal(activeRequestsFromStats(stats), 5);
  assert.equal(activeRequestsFromStats(''), 0);
});

test('parseClusterHealth reads health_flags lines, IPv6 hosts included', () => {
  const text = [
    'app::observability_name::app',
    'app::127.0.0.1:8001::cx_active::0',
    'app::127.0.0.1:8001::health_flags::healthy',
    'app::127.0.0.1:8002::health_flags::/failed_active_hc/active_hc_timeout',
    'app::[::1]:8003::health_flags::healthy',
    'other::127.0.0.1:9::health_flags::healthy',
  ].join('\n');
  const health = parseClusterHealth(text, 'app');
  assert.deepEqual([...health.keys()], ['127.0.0.1:8001', '127.0.0.1:8002', '[::1]:8003']);
  assert.deepEqual(health.get('127.0.0.1:8001'), { flags: ['healthy'], healthy: true });
  assert.deepEqual(health.get('127.0.0.1:8002'), {
    flags: ['failed_active_hc', 'active_hc_timeout'],
    healthy: false,
  });
  assert.equal(parseClusterHealth(text, 'missing').size, 0);
});

test('envoyCommand: admin address file, parseable log format, base id or no hot restart, setpriv wrap', () => {
  const base = {
    binary: '/e/envoy',
    configPath: '/w/b.json',
    workDir: '/w',
    logLevel: 'info',
    concurrency: 2,
    hotRestart: 'dynamic-base-id',
    extraArgs: [],
    setpriv: undefined,
  } as const;
  const [cmd, args] = envoyCommand(base);
  assert.equal(cmd, '/e/envoy');
  assert.deepEqual(args.slice(0, 6), ['-c', '/w/b.json', '--log-level', 'info', '--concurrency', '2']);
  assert.ok(args.includes('--admin-address-path') && args.includes('/w/admin-address'));
  assert.ok(args.includes('--use-dynamic-base-id') && args.includes('/w/base-id'));
  assert.ok(args.includes('--log-format-escaped'));
  assert.equal(
    args[args.indexOf('--file-flush-interval-msec') + 1],
    '500',
    'the access log follows requests',
  );
  const [, noHot] = envoyCommand({ ...base, hotRestart: 'disabled', extraArgs: ['--log-format', '%v'] });
  assert.ok(noHot.includes('--disable-hot-restart') && !noHot.includes('--use-dynamic-base-id'));
  assert.equal(noHot.filter((a) => a === '--log-format').length, 1, 'a caller-supplied format wins');
  const [wrapped, wrappedArgs] = envoyCommand({ ...base, setpriv: '/usr/bin/setpriv' });
  assert.equal(wrapped, '/usr/bin/setpriv');
  assert.deepEqual(wrappedArgs.slice(0, 4), ['--pdeathsig', 'SIGTERM', '--', '/e/envoy']);
});

test('envoyCommand at debug keeps the secret-bearing loggers at info with --component-log-level', () => {
  const base = {
    binary: '/e/envoy',
    configPath: '/w/b.json',
    workDir: '/w',
    logLevel: 'debug',
    concurrency: 2,
    hotRestart: 'disabled',
    extraArgs: [],
    setpriv: undefined,
  } as const;
  const caps = sensitiveComponentCaps('debug');
  assert.ok(caps?.split(',').includes('http:info') && caps.split(',').includes('router:info'));
  assert.equal(sensitiveComponentCaps('info'), undefined, 'nothing to cap at info');
  assert.equal(sensitiveComponentCaps('warning'), undefined);
  const [, args] = envoyCommand({ ...base, componentLogLevels: caps });
  assert.equal(args[args.indexOf('--component-log-level') + 1], caps);
  assert.ok(!envoyCommand(base)[1].includes('--component-log-level'));
});
