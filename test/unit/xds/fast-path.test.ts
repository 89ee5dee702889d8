// The fast path's filters and route settings as compile emits them (xds/compile/fast-path.ts,
// listener.ts, route-configuration.ts, identity-strip.ts), rendered through the codec as Envoy
// receives them: with `decision_token_lifetime` above 0 the chain gains jwt_authn and the shadow
// RBAC before a gated ext_authz; replayable routes are named by their decision name and carry
// nothing else; the credential strip settles the token's headers; with the lifetime 0 nothing of it
// is compiled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { renderResources } from '../../../src/proto/render.js';
import { credentialStripScript } from '../../../src/xds/compile/identity-strip.js';
import { withFastPath } from '../../../src/xds/compile/fast-path.js';
import type { IR, IRRoute } from '../../../src/ir/types.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DECISION_JWKS = '{"keys":[{"kty":"EC","crv":"P-256","x":"x","y":"y","kid":"k"}]}';

function irFor(settings: Record<string, unknown>): IR {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: '127.0.0.1:8080',
      jwt_claims_headers: { 'X-Dept': 'department', 'x-portcullis-claim-email': 'email' },
      pass_identity_headers: true,
      routes: [
        {
          from: 'https://app.test',
          prefix: '/open',
          to: 'http://10.0.0.1',
          allow_public_unauthenticated_access: true,
        },
        {
          from: 'https://app.test',
          prefix: '/quiet',
          to: 'http://10.0.0.1',
          allowed_domains: ['example.com'],
          pass_identity_headers: false,
        },
        {
          from: 'https://app.test',
          prefix: '/get',
          to: 'http://10.0.0.1',
          policy: [{ allow: { and: [{ http_method: { in: ['GET'] } }] } }],
        },
        { from: 'https://app.test', prefix: '/', to: 'http://10.0.0.1', allowed_domains: ['example.com'] },
      ],
      ...settings,
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  const { ir } = translate(parsed.config, {
    systemCaFile: '/etc/ssl/certs/ca-certificates.crt',
    internal: {
      authorize: { host: '127.0.0.1', port: 5443 },
      authorizeTimeoutMs: 1000,
      jwksJson: '{"keys":[]}',
      decisionJwksJson: DECISION_JWKS,
      http: { host: '127.0.0.1', port: 5080 },
    },
  });
  assert.ok(ir);
  return ir;
}

function rendered(ir: IR): { hcm: Json; routes: Json[]; filters: unknown[] } {
  const out = renderResources(compile(ir)) as unknown as Record<string, Json[]>;
  const listener = out.listeners?.find((candidate) => candidate.name === ir.listener.name) as Json;
  const routes = (out.routes ?? [])
    .flatMap((table) => table.virtual_hosts as Json[])
    .flatMap((vhost) => vhost.routes as Json[]);
  return {
    hcm: listener.filter_chains[0].filters[0].typed_config as Json,
    routes,
    filters: out.filters ?? [],
  };
}

const on = rendered(irFor({}));
const off = rendered(irFor({ decision_token_lifetime: '0s' }));

const filterNames = (hcm: Json): string[] =>
  (hcm.http_filters as Json[]).map((filter) => String(filter.name));
const byPrefix = (routes: Json[], prefix: string): Json => {
  const found = routes.find((route) => route.match?.prefix === prefix);
  assert.ok(found, prefix);
  return found;
};

test('the chain: host case, identity strip, jwt_authn, the shadow RBAC, ext_authz, credential strip, router', () => {
  assert.deepEqual(filterNames(on.hcm), [
    'portcullis.host_case',
    'portcullis.strip_identity_headers',
    'envoy.filters.http.jwt_authn',
    'portcullis.fast_path',
    'envoy.filters.http.ext_authz',
    'portcullis.strip_credentials',
    'envoy.filters.http.router',
  ]);
  const extAuthz = (on.hcm.http_filters as Json)[4].typed_config;
  assert.deepEqual(extAuthz.filter_enabled_metadata, {
    filter: 'envoy.filters.http.rbac',
    path: [{ key: 'fast_path_shadow_engine_result' }],
    value: { string_match: { exact: 'allowed' } },
    invert: true,
  });
  const rbac = (on.hcm.http_filters as Json)[3].config_discovery;
  assert.deepEqual(rbac.config_source, { ads: {}, resource_api_version: 'V3' });
  assert.equal(rbac.apply_default_config_without_warming, true);
  assert.deepEqual(rbac.type_urls, ['type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC']);
  assert.doesNotMatch(
    JSON.stringify(rbac.default_config),
    /ALLOW/,
    'until the resource arrives, nothing is allowed',
  );
  assert.deepEqual(on.filters, [], 'builds serve no ECDS resource: the revocation feed overlays it');
});

test('jwt_authn: one provider reading the decision cookie only, claims to headers in sorted order', () => {
  const config = (on.hcm.http_filters as Json)[2].typed_config;
  assert.deepEqual(Object.keys(config.providers), ['portcullis-decision']);
  const provider = config.providers['portcullis-decision'];
  assert.equal(provider.issuer, 'portcullis-decision');
  assert.equal(provider.audiences, undefined, 'the route binding is the host binding');
  assert.deepEqual(provider.from_cookies, ['_portcullis_dt']);
  assert.equal(provider.from_headers, undefined, 'never Authorization');
  assert.equal(provider.local_jwks.inline_string, DECISION_JWKS);
  assert.equal(provider.payload_in_metadata, 's');
  assert.equal(provider.clock_skew_seconds, 5);
  assert.equal(provider.require_expiration, true);
  assert.ok(provider.jwt_cache_config.jwt_cache_size > 0);
  assert.deepEqual(provider.claim_to_headers, [
    { header_name: 'x-portcullis-sid', claim_name: 'sid' },
    { header_name: 'x-portcullis-jwt-assertion', claim_name: 'ja' },
    { header_name: 'x-dept', claim_name: 'h.c0' },
    { header_name: 'x-portcullis-claim-email', claim_name: 'h.c1' },
  ]);
  assert.deepEqual(config.rules, [{ match: { prefix: '/' }, requirement_name: 'portcullis-decision' }]);
  assert.deepEqual(config.requirement_map, {
    'portcullis-decision': {
      requires_any: {
        requirements: [{ provider_name: 'portcullis-decision' }, { allow_missing_or_failed: {} }],
      },
    },
  });
});

test('replayable routes are named by their decision name and carry nothing else', () => {
  const ir = irFor({});
  const names = new Map(
    ir.virtualHosts.flatMap((vhost) => vhost.routes).map((route) => [route.match.value, route.decisionName]),
  );
  assert.match(String(names.get('/')), /^[0-9a-f]{16}\.[0-9a-f]{16}\.i$/, 'sends identity headers');
  assert.match(String(names.get('/quiet')), /^[0-9a-f]{16}\.[0-9a-f]{16}$/, 'sends none');
  assert.equal(names.get('/get'), undefined, 'a request criterion: never replayed');
  assert.equal(names.get('/open'), undefined, 'public');
  for (const prefix of ['/', '/quiet', '/get', '/open']) {
    const [withIt, without] = [byPrefix(on.routes, prefix), byPrefix(off.routes, prefix)];
    assert.equal(withIt.name, names.get(prefix) ?? without.name, prefix);
    // Everything but the name is what the route was without the fast path.
    assert.deepEqual({ ...withIt, name: undefined }, { ...without, name: undefined }, prefix);
  }
});

test('the credential strip also drops the decision cookie and the sid header; the access log says who decided', () => {
  const strip = (hcm: Json): string =>
    (hcm.http_filters as Json[]).find((filter) => filter.name === 'portcullis.strip_credentials')
      ?.typed_config.default_source_code.inline_string;
  const script = strip(on.hcm);
  assert.equal(
    script,
    credentialStripScript('_portcullis', {
      identityHeaders: ['x-portcullis-jwt-assertion', 'x-dept', 'x-portcullis-claim-email'],
    }),
  );
  assert.match(script, /\["_portcullis_dt"\] = true/);
  assert.match(script, /^ {2}headers:remove\(SID_HEADER\)$/m);
  assert.match(script, /^local SID_HEADER = "x-portcullis-sid"$/m);
  assert.match(script, /^local IDENTITY_SUFFIX = "\.i"$/m);
  assert.match(
    script,
    /^local IDENTITY_HEADERS = \{"x-dept", "x-portcullis-claim-email", "x-portcullis-jwt-assertion"\}$/m,
  );
  assert.match(script, /^local FAST_PATH_RESULT = "fast_path_shadow_engine_result"$/m);
  const format = on.hcm.access_log[0].typed_config.log_format.json_format;
  assert.equal(
    format.decided_by,
    "%CEL(metadata.filter_metadata['envoy.filters.http.rbac']['fast_path_shadow_engine_result'] == 'allowed' ? 'envoy' : 'portcullis')%",
  );
  assert.equal(format.decision_sid, '%DYNAMIC_METADATA(envoy.filters.http.jwt_authn:s:sid)%');
});

test('with decision_token_lifetime 0 nothing of the fast path is compiled', () => {
  assert.deepEqual(filterNames(off.hcm), [
    'portcullis.host_case',
    'portcullis.strip_identity_headers',
    'envoy.filters.http.ext_authz',
    'portcullis.strip_credentials',
    'envoy.filters.http.router',
  ]);
  const text = JSON.stringify(off);
  for (const piece of [
    'jwt_authn',
    'portcullis.fast_path',
    '_portcullis_dt',
    'x-portcullis-sid',
    'filter_enabled_metadata',
    'decided_by',
  ])
    assert.ok(!text.includes(piece), piece);
  assert.equal(
    (off.hcm.http_filters as Json)[3].typed_config.default_source_code.inline_string,
    credentialStripScript('_portcullis'),
  );
  for (const route of off.routes)
    assert.ok(
      route.name === undefined || /^route-[0-9a-f]{16}$/.test(String(route.name)),
      String(route.name),
    );
});

test('withFastPath names only a route with a decision name', () => {
  const named = withFastPath({ name: 'route-x' }, { decisionName: 'abc.def' } as IRRoute);
  assert.equal(named.name, 'abc.def');
  assert.equal(withFastPath({ name: 'route-x' }, {} as IRRoute).name, 'route-x');
});
