// The route locator decides as Envoy does which route a URL reaches: exact hosts before wildcards,
// the catch-all's authority regex, path matchers in order, and never the authenticate host.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRouteLocator } from '../../../src/authenticate/route-locator.js';
import type { IR, IRPathMatch } from '../../../src/ir/types.js';

function route(id: string, match: IRPathMatch, idpId = 'idp', authorityRegex?: string): unknown {
  return { id, match, idpId, authorityRegex };
}

const ir = {
  virtualHosts: [
    {
      name: 'app.example.com',
      domains: ['app.example.com'],
      routes: [
        route('exact-api', { kind: 'prefix', value: '/api' }, 'idp-api'),
        route('exact-root', { kind: 'path', value: '/' }),
      ],
    },
    {
      name: '*.example.com',
      domains: ['*.example.com'],
      routes: [route('suffix', { kind: 'prefix', value: '/' })],
    },
    {
      name: '*.b.example.com',
      domains: ['*.b.example.com'],
      routes: [route('longer-suffix', { kind: 'regex', value: '/r/[0-9]+' })],
    },
    {
      name: 'intranet.*',
      domains: ['intranet.*'],
      routes: [route('prefix', { kind: 'prefix', value: '/' })],
    },
    {
      name: 'catch-all',
      domains: ['*'],
      routes: [route('regex-host', { kind: 'prefix', value: '/' }, 'idp', '^a[^/:]+z\\.test$')],
    },
  ],
  authorize: {
    authenticateUrl: 'https://auth.example.com',
    claimHeaders: {},
    cookieName: '_p',
    issuerFormat: 'host_only',
  },
} as unknown as IR;

const locate = (url: string): string | undefined => createRouteLocator(ir).locate(new URL(url))?.routeId;

test('an exact host wins, and its routes are tried in order', () => {
  assert.equal(locate('https://app.example.com/api/x'), 'exact-api');
  assert.deepEqual(createRouteLocator(ir).locate(new URL('https://app.example.com/api')), {
    routeId: 'exact-api',
    idpId: 'idp-api',
  });
  assert.equal(locate('https://APP.example.com:8443/'), 'exact-root', 'case and port do not matter');
  assert.equal(locate('https://app.example.com/other'), undefined, 'no fallback to a wildcard host');
});

test('suffix wildcards longest first, then prefix wildcards, then the catch-all', () => {
  assert.equal(locate('https://x.example.com/anything'), 'suffix');
  assert.equal(locate('https://c.b.example.com/r/42'), 'longer-suffix');
  assert.equal(locate('https://c.b.example.com/r/x'), undefined, 'the regex is a full match');
  assert.equal(locate('https://intranet.corp/'), 'prefix');
  assert.equal(locate('https://abcz.test/'), 'regex-host');
  assert.equal(locate('https://other.test/'), undefined, 'the authority regex must match');
  assert.equal(locate('https://example.com/'), undefined, '*.example.com does not match the bare domain');
});

test('the authenticate host, other schemes and credentials in the URL locate nothing', () => {
  assert.equal(locate('https://auth.example.com/'), undefined);
  assert.equal(locate('javascript://app.example.com/'), undefined);
  assert.equal(locate('https://user:pw@app.example.com/'), undefined);
});

test("Portcullis's own paths on a route host locate the host's first route", () => {
  assert.equal(locate('https://app.example.com/.portcullis/'), 'exact-api');
  assert.equal(locate('https://app.example.com/.portcullis/api/v1/login'), 'exact-api');
});

test('merged slashes are matched as Envoy normalizes them', () => {
  assert.equal(locate('https://app.example.com//api/x'), 'exact-api');
});
