// Envoy's access log compiled (xds/compile/access-log.ts, translate/access-log.ts): at log_level
// info or lower the connection manager writes one JSON object per request to stdout, carrying the
// marker the supervisor looks for, the request's method, host, path without its query, status,
// duration, upstream, request id and the user from ext_authz dynamic metadata; at warn and above
// there is no access log. The format survives encoding and renders as plain JSON (the golden and
// dry-run form Envoy loads). test/integration/access-log.test.ts runs it through Envoy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { translateAccessLog } from '../../../src/translate/access-log.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { LISTENER_TYPE } from '../../../src/proto/type-urls.js';
import { assertKnownFields, decodeMessage, encodeMessage } from '../../../src/proto/codec.js';
import { toProto3Json } from '../../../src/proto/proto3-json.js';
import { ACCESS_LOG_MARKER } from '../../../src/contract/access-log.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const LISTENER = 'envoy.config.listener.v3.Listener';

/** The user-facing listener's connection manager, as Envoy receives it (proto3 JSON). */
function hcmFor(settings: Record<string, unknown>): Json {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      address: '127.0.0.1:8080',
      insecure_server: true,
      ...settings,
      routes: [{ from: 'http://app.test', to: 'http://10.0.0.1:8080' }],
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, { systemCaFile: '/etc/ssl/certs/ca-certificates.crt' });
  assert.ok(ir);
  const listener = compile(ir)[LISTENER_TYPE].find(({ name }) => name === 'http-ingress')?.message;
  assert.ok(listener);
  assertKnownFields(LISTENER, listener);
  const rendered = toProto3Json(LISTENER, decodeMessage(LISTENER, encodeMessage(LISTENER, listener))) as Json;
  return rendered.filter_chains[0].filters[0].typed_config as Json;
}

test('at log_level info one JSON line per request goes to stdout, with every field and the marker', () => {
  const hcm = hcmFor({});
  assert.equal(hcm.access_log.length, 1);
  const [log] = hcm.access_log;
  assert.equal(log.name, 'envoy.access_loggers.stdout');
  assert.equal(
    log.typed_config['@type'],
    'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
  );
  const format = log.typed_config.log_format.json_format as Record<string, string>;
  assert.equal(format[ACCESS_LOG_MARKER.key], ACCESS_LOG_MARKER.value);
  assert.equal(format.method, '%REQ(:METHOD)%');
  assert.equal(
    format.host,
    '%REQ(X-ENVOY-ORIGINAL-HOST?:AUTHORITY)%',
    'the host the client asked for, not the rewritten one',
  );
  assert.equal(format.path, '%PATH(NQ)%', 'the path without its query: queries carry codes and tokens');
  assert.equal(format.status, '%RESPONSE_CODE%');
  assert.equal(format.duration_ms, '%DURATION%');
  assert.equal(format.upstream_host, '%UPSTREAM_HOST%');
  assert.equal(format.upstream_cluster, '%UPSTREAM_CLUSTER%');
  assert.equal(format.request_id, '%REQ(X-REQUEST-ID)%');
  assert.equal(format.user, '%DYNAMIC_METADATA(envoy.filters.http.ext_authz:user)%');
  assert.equal(format.email, '%DYNAMIC_METADATA(envoy.filters.http.ext_authz:email)%');
  assert.ok(
    Object.values(format).every((value) => typeof value === 'string'),
    'the Struct renders as plain JSON strings (the form Envoy loads from a file)',
  );
});

test('debug and trace log requests too; warn and above write no access log', () => {
  assert.ok(hcmFor({ log_level: 'debug' }).access_log);
  assert.equal(hcmFor({ log_level: 'warn' }).access_log, undefined);
  assert.equal(hcmFor({ log_level: 'error' }).access_log, undefined);
  assert.deepEqual(translateAccessLog({ log_level: 'trace' }), { accessLog: true });
  assert.deepEqual(translateAccessLog({ log_level: 'info' }), { accessLog: true });
  assert.deepEqual(translateAccessLog({ log_level: 'fatal' }), {});
  assert.deepEqual(translateAccessLog({ log_level: 'silent' }), {});
});
