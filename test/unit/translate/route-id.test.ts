// Route ids name clusters and Envoy stats, so their text must stay exactly the canonical JSON it
// always was, whatever way it is written.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../../src/shared/canonical-json.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { routeId, routeIdentityText } from '../../../src/translate/route-identity.js';
import { shortHash } from '../../../src/shared/hash.js';

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
    document: { insecure_server: true, address: ':8080', routes },
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

test('routeId hashes the identity text byte for byte, whatever characters and weights the route holds', () => {
  // Seeded, so a failure names a case that can be replayed.
  let seed = 0x2545f491;
  const next = (below: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % below;
  };
  // Plain ASCII, JSON's escapes, control characters, Latin-1, BMP, astral pairs and lone surrogates.
  const alphabet = [
    'a',
    '/',
    '-',
    '.',
    ' ',
    '~',
    '"',
    '\\',
    '\n',
    '\u0001',
    '\u007f',
    '\u00e9',
    '\u4e2d',
    '\u{1F600}',
    '\ud800',
    '\udc00',
  ];
  const text = (): string => {
    let out = '';
    for (let i = next(12); i > 0; i--) out += alphabet[next(alphabet.length)];
    return out;
  };
  const pick = (): string | undefined => (next(2) === 0 ? undefined : `/${text()}`);
  const weights = [undefined, 0, 1, 3, 9, 10, 99, 1000, 4294967295, Number.MAX_SAFE_INTEGER, 1.5, -2];
  for (let round = 0; round < 2000; round++) {
    const destinations = Array.from({ length: 1 + next(3) }, () => ({
      href: next(3) === 0 ? `http://h${text()}/` : `http://10.0.${next(256)}.${next(256)}:8080/`,
      weight: weights[next(weights.length)],
    }));
    const route = {
      from_href: next(4) === 0 ? `https://${text()}.example/` : `https://r${round}.example.com/`,
      path: pick(),
      prefix: pick(),
      regex: pick(),
      to: destinations,
    } as unknown as Parameters<typeof routeId>[0];
    const expected = routeIdentityText(route);
    assert.equal(routeId(route), shortHash(expected), `case ${round}: ${JSON.stringify(expected)}`);
  }
});
