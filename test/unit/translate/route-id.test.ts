// Route ids name clusters and Envoy stats, so their text must stay exactly the canonical JSON it
// always was, whatever way it is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { routeId, routeIdentityText } from '../../../src/translate/route-identity.js';
import { shortHash } from '../../../src/shared/hash.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

test('routeIdentityText is the canonical JSON of from, matcher and destinations', () => {
  const routes: Record<string, unknown>[] = [
    { from: 'https://a.example.com', to: 'http://10.0.0.1:8080' },
    {
      from: 'https://b.example.com:8443',
      prefix: '/api/',
      to: ['http://10.0.0.1:8080,3', 'https://up.test,1'],
    },
    { from: 'https://*.example.com', path: '/exact "quoted" \\ path', to: 'http://10.0.0.2' },
    { from: 'https://c.example.com', regex: '^/v[0-9]+/\u00e9t\u00e9$', to: ['http://x.test/base/'] },
    { from: 'https://d.example.com', prefix: '/', path: undefined, to: 'http://10.0.0.3:81' },
    { from: 'https://e.example.com', regex: '^/\u{1F600}/\t$', to: 'http://10.0.0.4' },
    { from: 'https://f.example.com', prefix: `/${'long/'.repeat(2000)}`, to: 'http://10.0.0.5,2' },
  ];
  const config = parseConfig({
    document: { ...SIGN_IN, insecure_server: true, address: ':8080', routes },
    env: {},
    readText: () => '',
  }).config;
  assert.ok(config, 'the routes parse');
  assert.equal(config.routes.length, routes.length);
  for (const route of config.routes) {
    const expected = canonicalJson({
      from: route.from.href,
      prefix: route.prefix,
      path: route.path,
      regex: route.regex,
      to: route.to.map(({ url, weight }) => (weight === undefined ? url.href : `${url.href},${weight}`)),
    });
    assert.equal(routeIdentityText(route), expected);
    assert.equal(routeId(route), shortHash(expected), 'the id hashes exactly that text');
  }
});
