// `rewrite_response_headers` from config to IR to Envoy resources: the IR carries the rules with
// lower-case header names and the listener a flag; compile puts the rules in the route's metadata
// beside the identity strip's entry, switches the one fixed script on for that route only, and
// adds the filter to the chain only while some route has rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { renderResources } from '../../../src/proto/render.js';
import { compileRoute } from '../../../src/xds/compile/route-configuration.js';
import {
  REWRITE_RESPONSE_HEADERS_SCRIPT,
  rewriteResponseHeadersRoute,
} from '../../../src/xds/compile/response-header-rewrites.js';
import type { IR, IRRoute } from '../../../src/ir/types.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { TEST_INTERNAL } from '../../support/internal-endpoints.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const FILTER = 'portcullis.rewrite_response_headers';
const RULE = { header: 'Location', prefix: 'http://internal:8080/', value: 'https://app.test/' };

function irOf(routes: readonly Record<string, unknown>[], internal = false): IR {
  const parsed = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const { ir } = translate(parsed.config, {
    systemCaFile: '/ca.pem',
    ...(internal ? { internal: TEST_INTERNAL } : {}),
  });
  assert.ok(ir);
  return ir;
}

function routeOf(ir: IR, host: string): IRRoute {
  const route = ir.virtualHosts.find((vhost) => vhost.name === host)?.routes[0];
  assert.ok(route, host);
  return route;
}

/** The IR's Envoy resources as Envoy receives them (rendered through the codec). */
function rendered(ir: IR): Record<string, Json[]> {
  return renderResources(compile(ir)) as unknown as Record<string, Json[]>;
}

function httpFilters(ir: IR): Json[] {
  const listener = rendered(ir).listeners?.[0] as Json;
  return listener.filter_chains[0].filters[0].typed_config.http_filters;
}

test('translate lower-cases the header names, keeps the order and flags the listener', () => {
  const ir = irOf([
    {
      from: 'https://app.test',
      to: 'http://10.0.0.1:8080',
      rewrite_response_headers: [RULE, { ...RULE, header: 'LINK' }],
    },
    { from: 'https://plain.test', to: 'http://10.0.0.2:8080' },
  ]);
  assert.deepEqual(routeOf(ir, 'app.test').responseHeaderRewrites, [
    { ...RULE, header: 'location' },
    { ...RULE, header: 'link' },
  ]);
  assert.equal('responseHeaderRewrites' in routeOf(ir, 'plain.test'), false);
  assert.equal(ir.listener.rewritesResponseHeaders, true);
});

test('no rules, or rules only on a route that answers by itself: no IR rules, no flag, no filter', () => {
  for (const routes of [
    [{ from: 'https://app.test', to: 'http://10.0.0.1:8080' }],
    [{ from: 'https://app.test', response: { status: 200, body: 'ok' }, rewrite_response_headers: [RULE] }],
  ]) {
    const ir = irOf(routes, true);
    assert.equal('responseHeaderRewrites' in routeOf(ir, 'app.test'), false);
    assert.equal(ir.listener.rewritesResponseHeaders, undefined);
    assert.ok(!httpFilters(ir).some((filter) => filter.name === FILTER));
  }
});

test("a route's rules are its metadata beside the identity strip's, and its per-filter config names the script", () => {
  const ir = irOf([
    {
      from: 'https://app.test',
      to: 'http://10.0.0.1:8080',
      pass_request_identity_headers: ['X-Forwarded-User'],
      rewrite_response_headers: [RULE],
    },
  ]);
  const compiled = compileRoute(routeOf(ir, 'app.test')) as Json;
  assert.deepEqual(Object.keys(compiled.metadata.filter_metadata).sort(), [
    FILTER,
    'portcullis.strip_identity_headers',
  ]);
  assert.deepEqual(compiled.metadata.filter_metadata[FILTER].fields.rules.listValue.values, [
    {
      structValue: {
        fields: {
          header: { stringValue: 'location' },
          prefix: { stringValue: RULE.prefix },
          value: { stringValue: RULE.value },
        },
      },
    },
  ]);
  assert.deepEqual(Object.keys(compiled.typed_per_filter_config), [FILTER]);
  assert.equal(rewriteResponseHeadersRoute(undefined), undefined);
  assert.equal(rewriteResponseHeadersRoute([]), undefined);
});

test('with authorization on, a route keeps both its ext_authz and its rewrite per-filter config', () => {
  const ir = irOf(
    [{ from: 'https://app.test', to: 'http://10.0.0.1:8080', rewrite_response_headers: [RULE] }],
    true,
  );
  const table = rendered(ir).routes?.[0] as Json;
  const route = (table.virtual_hosts as Json[])
    .find((vhost) => vhost.name === 'app.test')
    ?.routes.find((entry: Json) => entry.metadata !== undefined);
  assert.deepEqual(Object.keys(route.typed_per_filter_config).sort(), [
    'envoy.filters.http.ext_authz',
    FILTER,
  ]);
});

test('the script is one fixed text, whatever the rules say', () => {
  const filterOf = (value: string): Json => {
    const filters = httpFilters(
      irOf(
        [
          {
            from: 'https://app.test',
            to: 'http://10.0.0.1:8080',
            rewrite_response_headers: [{ ...RULE, value }],
          },
        ],
        true,
      ),
    );
    const names = filters.map((filter) => filter.name);
    assert.equal(names.indexOf(FILTER), names.indexOf('envoy.filters.http.ext_authz') + 1);
    return filters.find((filter) => filter.name === FILTER) as Json;
  };
  const one = filterOf('" end os.exit() --');
  assert.deepEqual(one, filterOf('https://other.test/'));
  assert.equal(one.typed_config.source_codes.rewrite.inline_string, REWRITE_RESPONSE_HEADERS_SCRIPT);
  assert.ok(!REWRITE_RESPONSE_HEADERS_SCRIPT.includes('os.exit'));
});
