// Routes that answer by themselves compile to Envoy's redirect and direct-response actions: only
// the fields set are written, each code maps to its RedirectResponseCode, the body is inline; no
// route names a cluster for them; a protected one still carries its ext_authz route context and a
// public one switches ext_authz off. Everything passes the proto field check and encodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { answerAction } from '../../../src/xds/compile/answer.js';
import { assertKnownFields, decodeMessage, encodeMessage } from '../../../src/proto/codec.js';
import { ROUTE_CONFIGURATION_TYPE } from '../../../src/proto/type-urls.js';
import { checkConsistency } from '../../../src/xds/snapshot/consistency.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { TEST_INTERNAL } from '../../support/internal-endpoints.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('each redirect code maps to its Envoy name; only the fields set are written', () => {
  const base = {
    kind: 'redirect',
    httpsRedirect: false,
    scheme: undefined,
    host: undefined,
    port: undefined,
    path: undefined,
    stripQuery: false,
  } as const;
  const names = {
    301: 'MOVED_PERMANENTLY',
    302: 'FOUND',
    303: 'SEE_OTHER',
    307: 'TEMPORARY_REDIRECT',
    308: 'PERMANENT_REDIRECT',
  };
  for (const [code, name] of Object.entries(names)) {
    assert.deepEqual(answerAction({ ...base, host: 'b.test', code: Number(code) as 301 }), {
      redirect: { response_code: name, host_redirect: 'b.test' },
    });
  }
  assert.deepEqual(
    answerAction({
      ...base,
      scheme: 'http',
      port: 8080,
      path: { kind: 'replace', value: '/x?y=1' },
      code: 302,
      stripQuery: true,
    }),
    {
      redirect: {
        response_code: 'FOUND',
        scheme_redirect: 'http',
        port_redirect: 8080,
        path_redirect: '/x?y=1',
        strip_query: true,
      },
    },
  );
  assert.deepEqual(
    answerAction({ ...base, httpsRedirect: true, path: { kind: 'prefix', value: '/n/' }, code: 301 }),
    {
      redirect: { response_code: 'MOVED_PERMANENTLY', https_redirect: true, prefix_rewrite: '/n/' },
    },
  );
  assert.deepEqual(answerAction({ kind: 'response', status: 200, body: 'ok' }), {
    direct_response: { status: 200, body: { inline_string: 'ok' } },
  });
  assert.deepEqual(answerAction({ kind: 'response', status: 204, body: '' }), {
    direct_response: { status: 204 },
  });
});

test('compiled answering routes: no cluster, ext_authz as for any route, valid RouteConfiguration', () => {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: ':8080',
      routes: [
        {
          from: 'https://app.test',
          prefix: '/old/',
          redirect: { prefix_rewrite: '/new/', response_code: 308 },
        },
        // After `/old/`: first, it would shadow it.
        { from: 'https://app.test', to: 'http://10.0.0.1:8080', allow_any_authenticated_user: true },
        {
          from: 'https://status.test',
          response: { status: 503, body: 'down' },
          allow_public_unauthenticated_access: true,
          set_response_headers: { 'Content-Type': 'text/plain' },
        },
      ],
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, {
    systemCaFile: '/ca.pem',
    internal: TEST_INTERNAL,
  });
  assert.ok(ir);
  const compiled = compile(ir);
  assert.deepEqual(checkConsistency(compiled), []);
  assert.equal(
    compiled['envoy.config.cluster.v3.Cluster'].filter((c) => c.name.startsWith('route-')).length,
    1,
  );
  const routes: Json[] = [];
  for (const { message } of compiled[ROUTE_CONFIGURATION_TYPE]) {
    assertKnownFields(ROUTE_CONFIGURATION_TYPE, message);
    const decoded = decodeMessage(ROUTE_CONFIGURATION_TYPE, encodeMessage(ROUTE_CONFIGURATION_TYPE, message));
    routes.push(...(decoded.virtual_hosts as Json[]).flatMap((vhost) => vhost.routes as Json[]));
  }
  const redirect = routes.find((route) => route.match.prefix === '/old/');
  const response = routes.find((route) => route.direct_response !== undefined);
  assert.ok(redirect && response);
  assert.deepEqual(redirect.redirect, { prefix_rewrite: '/new/', response_code: 'PERMANENT_REDIRECT' });
  assert.equal(redirect.route, undefined);
  const authz = redirect.typed_per_filter_config['envoy.filters.http.ext_authz'];
  assert.ok(authz.check_settings.context_extensions, 'a protected redirect route is checked first');
  assert.deepEqual(response.direct_response, { status: 503, body: { inline_string: 'down' } });
  assert.equal(response.typed_per_filter_config['envoy.filters.http.ext_authz'].disabled, true);
  assert.deepEqual(response.response_headers_to_add[0].header, { key: 'Content-Type', value: 'text/plain' });
});
