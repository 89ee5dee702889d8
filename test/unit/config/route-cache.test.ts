// The route cache a reload passes back into parseConfig: unchanged routes are reused, and the
// result is always what a parse from scratch gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig, type ParseResult, type RouteCache } from '../../../src/config/parse-config.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

function parse(
  routes: unknown[],
  previousRoutes?: RouteCache,
  files: Record<string, string> = {},
): ParseResult {
  return parseConfig({
    document: { insecure_server: true, address: ':8080', ...SIGN_IN, routes },
    env: {},
    readText: (file) => {
      const text = files[file];
      if (text === undefined) throw new Error(`no such file ${file}`);
      return text;
    },
    ...(previousRoutes === undefined ? {} : { previousRoutes }),
  });
}

const route = (host: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  from: `https://${host}`,
  to: 'http://10.0.0.1:8080',
  ...extra,
});

test('an unchanged route is reused; a changed one is validated again; the result equals a fresh parse', () => {
  const first = parse([route('a.test'), route('b.test')]);
  assert.ok(first.config);
  const second = parse([route('a.test'), route('c.test')], first.routeCache);
  assert.ok(second.config);
  assert.equal(second.config.routes[0], first.config.routes[0], 'same place, same content: reused');
  assert.notEqual(second.config.routes[1], first.config.routes[1]);
  assert.deepEqual(second.config, parse([route('a.test'), route('c.test')]).config);
});

test('the cache is keyed by place too: a route that moved is validated again', () => {
  const first = parse([route('a.test'), route('b.test')]);
  const moved = parse([route('b.test'), route('a.test')], first.routeCache);
  assert.ok(first.config && moved.config);
  assert.notEqual(moved.config.routes[0], first.config.routes[1]);
  assert.deepEqual(moved.config, parse([route('b.test'), route('a.test')]).config);
});

test('a route that reads a file is never cached: the file may change under the same text', () => {
  const withFile = route('a.test', { tls_custom_ca_file: '/ca.pem' });
  const files = { '/ca.pem': 'not a certificate' };
  const first = parse([withFile], undefined, files);
  assert.equal(first.routeCache.size, 0);
});

// Routes have no warnings of their own any more (an unknown key, the last one, is an error): a
// route that gains an unknown key is validated again and refused, not taken from the cache.
test('a cached route that gains an unknown key is refused, and is not cached', () => {
  const first = parse([route('a.test')]);
  assert.equal(first.routeCache.size, 1);
  const misspelt = parse([{ ...route('a.test'), prefx: '/api' }], first.routeCache);
  assert.equal(misspelt.config, undefined);
  assert.match(misspelt.problems[0]?.message ?? '', /unknown route option \(did you mean prefix\?\)/);
  assert.equal(misspelt.routeCache.size, 0);
  assert.deepEqual(
    parse([{ ...route('a.test'), prefx: '/api' }], misspelt.routeCache).problems,
    misspelt.problems,
  );
});

test('a route with problems is not cached and keeps failing', () => {
  const broken = route('a.test/path');
  const first = parse([broken]);
  assert.equal(first.config, undefined);
  assert.equal(first.routeCache.size, 0);
  assert.equal(parse([broken], first.routeCache).config, undefined);
});
