// Issue 26's edge and observability options (parse-observability.ts): their defaults, the
// basic-auth pair decoded from base64, and each cross-option check, whose message names the key
// (or environment variable) that was set and never shows a secret.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { formatProblem } from '../../../src/shared/errors.js';
import { assertProblem, b64, base, CERT_PEM, KEY_PEM, parse, problems, valid } from './helpers.js';

/** TLS on `address` (no `insecure_server`), which a redirect to HTTPS needs. */
function tls(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const document = base({ address: ':8443', certificate: CERT_PEM, certificate_key: KEY_PEM, ...extra });
  delete document.insecure_server;
  return document;
}

test('unset, the options leave nothing on: no metrics, no auth, no tracing export, no redirect', () => {
  const config = valid(base());
  assert.equal(config.metrics_address, undefined);
  assert.equal(config.metrics_basic_auth, undefined);
  assert.equal(config.otel_exporter_otlp_endpoint, undefined);
  assert.equal(config.otel_exporter_otlp_protocol, 'grpc');
  assert.equal(config.tracing_sampling_rate, 0.0001);
  assert.equal(config.http_redirect_addr, undefined);
  assert.equal(config.proxy_log_level, undefined);
  assert.equal(config.log_level, 'info');
});

test('metrics_basic_auth is decoded to user:password, from the file or the environment', () => {
  const fromFile = valid(base({ metrics_basic_auth: b64('scraper:pa:ss word') }));
  assert.equal(fromFile.metrics_basic_auth?.reveal(), 'scraper:pa:ss word');
  const fromEnv = valid(base(), { METRICS_BASIC_AUTH: `${b64('prom:s3cret')}\n` });
  assert.equal(fromEnv.metrics_basic_auth?.reveal(), 'prom:s3cret', 'surrounding whitespace is trimmed');
  const unpadded = b64('ab:c').replace(/=+$/, '');
  assert.equal(valid(base({ metrics_basic_auth: unpadded })).metrics_basic_auth?.reveal(), 'ab:c');
});

test('the decoded pair never prints: Config dumps show it redacted', () => {
  const config = valid(base({ metrics_basic_auth: b64('prom:hunter2-secret') }));
  for (const dump of [inspect(config, { depth: 5 }), JSON.stringify(config)]) {
    assert.ok(!dump.includes('hunter2-secret'), dump);
    assert.ok(!dump.includes(b64('prom:hunter2-secret')), dump);
  }
});

test('metrics_basic_auth that is not base64 of user:password is an error that shows neither value', () => {
  const secrets = [
    'prom:hunter2-plain', // not base64 (the pair itself, unencoded)
    b64('hunter2-nocolon'), // no colon
    b64(':hunter2-nouser'), // empty user
    b64('prom:hunter2\nline'), // a line break
    'aHVudGVyMi11cmw_LXNhZmU-', // URL-safe alphabet, not the standard one
  ];
  for (const secret of secrets) {
    for (const [document, env, path] of [
      [base({ metrics_basic_auth: secret }), {}, 'metrics_basic_auth'],
      [base(), { METRICS_BASIC_AUTH: secret }, 'METRICS_BASIC_AUTH'],
    ] as const) {
      const result = parse(document, env);
      assert.equal(result.config, undefined, secret);
      const lines = [...result.problems, ...result.warnings].map(formatProblem);
      assertProblem(lines, path, 'must be base64 of user:password');
      for (const line of lines) {
        assert.ok(!line.includes('hunter2'), line);
        assert.ok(!line.includes(secret), line);
      }
    }
  }
});

test('an empty metrics_basic_auth is an error, not "no authentication"', () => {
  assertProblem(problems(base({ metrics_basic_auth: '  ' })), 'metrics_basic_auth', 'is empty');
});

test('http_redirect_addr with TLS on address and another port is accepted', () => {
  assert.equal(valid(tls({ http_redirect_addr: ':80' })).http_redirect_addr, ':80');
  assert.equal(valid(tls({ http_redirect_addr: '127.0.0.1:8080' }), {}).http_redirect_addr, '127.0.0.1:8080');
});

test('http_redirect_addr with insecure_server is an error naming both', () => {
  for (const [document, env, path] of [
    [base({ http_redirect_addr: ':80' }), {}, 'http_redirect_addr'],
    [base(), { HTTP_REDIRECT_ADDR: ':80' }, 'HTTP_REDIRECT_ADDR'],
  ] as const) {
    const list = problems(document, env);
    assertProblem(list, path, 'redirects to HTTPS, but insecure_server serves plain HTTP');
  }
});

test('http_redirect_addr on the port of address is an error naming the key and the address', () => {
  assertProblem(
    problems(tls({ http_redirect_addr: '127.0.0.1:8443' })),
    'http_redirect_addr',
    'takes the port of address (127.0.0.1:8443): use another, usually :80',
  );
  const unsetAddress = tls({ http_redirect_addr: ':443' });
  delete unsetAddress.address;
  assertProblem(problems(unsetAddress), 'http_redirect_addr', 'takes the port of address');
  assertProblem(
    problems(tls(), { HTTP_REDIRECT_ADDR: ':8443' }),
    'HTTP_REDIRECT_ADDR',
    'takes the port of address',
  );
});

test('otel_exporter_otlp_endpoint is an origin; a path, query or fragment is an error naming it', () => {
  const config = valid(base({ otel_exporter_otlp_endpoint: 'http://collector:4317' }));
  assert.equal(config.otel_exporter_otlp_endpoint?.href, 'http://collector:4317/');
  assert.equal(
    valid(base({ otel_exporter_otlp_endpoint: 'https://otel.example.com/' })).otel_exporter_otlp_endpoint
      ?.origin,
    'https://otel.example.com',
  );
  for (const endpoint of [
    'http://collector:4318/v1/traces',
    'http://collector:4318?x=1',
    'http://collector:4318/#top',
  ]) {
    assertProblem(
      problems(base({ otel_exporter_otlp_endpoint: endpoint })),
      'otel_exporter_otlp_endpoint',
      'must be an origin (http://collector:4318): the OTLP exporters add their own paths',
    );
  }
  assertProblem(
    problems(base(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/v1/traces' }),
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'must be an origin',
  );
});

test('otel_exporter_otlp_protocol takes grpc or http/protobuf only', () => {
  assert.equal(
    valid(base({ otel_exporter_otlp_protocol: 'http/protobuf' })).otel_exporter_otlp_protocol,
    'http/protobuf',
  );
  const list = problems(base({ otel_exporter_otlp_protocol: 'http/json' }));
  assert.ok(
    list.some((line) => line.startsWith('otel_exporter_otlp_protocol: ')),
    list.join('\n'),
  );
});

test('the checks report together, each once', () => {
  const list = problems(
    base({
      http_redirect_addr: ':80',
      otel_exporter_otlp_endpoint: 'http://collector:4317/x',
      metrics_basic_auth: b64('nocolon'),
    }),
  );
  assert.deepEqual(
    list.map((line) => line.slice(0, line.indexOf(':'))).sort(),
    ['http_redirect_addr', 'metrics_basic_auth', 'otel_exporter_otlp_endpoint'],
    list.join('\n'),
  );
});
