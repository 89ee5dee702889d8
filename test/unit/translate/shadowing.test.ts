// Shadowed routes: a later route that an earlier prefix, path or decidable regex on the same from
// host already covers is an error naming both; only certain coverage is reported.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/parse-config.js';
import { translate } from '../../../src/translate/translate.js';
import { createShadowIndex } from '../../../src/translate/shadowing.js';
import type { IRPathMatch } from '../../../src/ir/types.js';
import { SIGN_IN } from '../../support/sign-in-config.js';

type Matcher = Partial<Record<'prefix' | 'path' | 'regex', string>>;

/** The [later, earlier] pairs translate reports for these routes (all on app.test unless given). */
function shadowed(routes: readonly (Matcher & { from?: string })[]): [string, string][] {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: ':8080',
      routes: routes.map((route) => ({ from: 'https://app.test', to: 'http://10.0.0.1:8080', ...route })),
    },
    env: {},
    readText: () => '',
  });
  assert.deepEqual(parsed.problems, []);
  assert.ok(parsed.config);
  return translate(parsed.config, { systemCaFile: '/ca.pem' }).problems.map((problem) => [
    problem.path,
    /^never matches: (routes\[\d+\]) comes first/.exec(problem.message)?.[1] ?? problem.message,
  ]);
}

test('issue 33: prefix / first makes a later /admin route with a stricter policy unreachable', () => {
  const parsed = parseConfig({
    document: {
      ...SIGN_IN,
      insecure_server: true,
      address: ':8080',
      routes: [
        { from: 'https://app.test', to: 'http://10.0.0.1:8080', allow_public_unauthenticated_access: true },
        {
          from: 'https://app.test',
          prefix: '/admin',
          to: 'http://10.0.0.1:8080',
          allowed_users: ['a@b.test'],
        },
      ],
    },
    env: {},
    readText: () => '',
  });
  assert.ok(parsed.config);
  const result = translate(parsed.config, { systemCaFile: '/ca.pem' });
  assert.equal(result.ir, undefined);
  assert.deepEqual(
    result.problems.map((problem) => problem.path),
    ['routes[1]'],
  );
  assert.equal(
    result.problems[0]?.message,
    'never matches: routes[0] comes first with the same from host (app.test) and its prefix "/" already matches every request this route\'s prefix "/admin" matches, and Envoy takes the first route that matches, so this route and its policy would never apply; put the more specific route first or change its matcher',
  );
});

test('an earlier prefix covers later prefixes, paths and regexes that start with it', () => {
  assert.deepEqual(
    shadowed([
      { prefix: '/api/' },
      { prefix: '/api/v2/' }, // covered
      { path: '/api/health' }, // covered
      { path: '/api' }, // not: shorter than the prefix
      { regex: '/api/v[0-9]+/users' }, // covered: every match starts with /api/v
      { regex: '(/api/.*|/other)' }, // not decided: no common literal past "/"
      { regex: '/ap[i]x' }, // not: /apix does not start with /api/
      { prefix: '/apix' }, // not
    ]),
    [
      ['routes[1]', 'routes[0]'],
      ['routes[2]', 'routes[0]'],
      ['routes[4]', 'routes[0]'],
    ],
  );
});

test('prefix matching is case-sensitive and by characters, as Envoy compiles it', () => {
  assert.deepEqual(shadowed([{ prefix: '/Admin' }, { prefix: '/admin' }, { prefix: '/ad' }]), []);
  // `/ad` then `/admin`: `/admin` starts with `/ad`, so Envoy gives `/admin...` to routes[0].
  assert.deepEqual(shadowed([{ prefix: '/ad' }, { prefix: '/admin' }]), [['routes[1]', 'routes[0]']]);
});

test('an earlier regex covers a later path it full-matches; more specific routes first are fine', () => {
  assert.deepEqual(
    shadowed([
      { regex: '/files/[a-z]+\\.txt' },
      { path: '/files/readme.txt' }, // covered
      { path: '/files/README.txt' }, // not matched: reachable
      { path: '/files/a.txt/more' }, // full match only: reachable
      { regex: '(?i)/x/[0-9]+' },
      { path: '/X/42' }, // covered: no literal prefix, still tested
    ]),
    [
      ['routes[1]', 'routes[0]'],
      ['routes[5]', 'routes[4]'],
    ],
  );
  assert.deepEqual(
    shadowed([{ path: '/admin/x' }, { prefix: '/admin' }, { regex: '/a.*' }, { prefix: '/' }]),
    [],
  );
});

test('only the same from host string counts: wildcards, other hosts and TCP routes are not decided', () => {
  assert.deepEqual(
    shadowed([
      { from: 'https://*.app.test' },
      { from: 'https://x.app.test', prefix: '/admin' }, // a wildcard covering the name: not decided
      { from: 'https://other.test', prefix: '/admin' },
      { from: 'https://*.app.test', prefix: '/admin' }, // same wildcard string: covered
    ]),
    [['routes[3]', 'routes[0]']],
  );
});

test('the index visits each route once per host and reports the earliest covering prefix', () => {
  const index = createShadowIndex();
  const visit = (match: IRPathMatch, at: string): string | undefined => index.visit('h', match, at)?.earlier;
  assert.equal(visit({ kind: 'prefix', value: '/a/b/' }, 'r0'), undefined);
  assert.equal(visit({ kind: 'prefix', value: '/a/' }, 'r1'), undefined);
  assert.equal(visit({ kind: 'path', value: '/a/b/c' }, 'r2'), 'r1', 'the most general prefix is named');
  assert.equal(visit({ kind: 'regex', value: '/a/b/\\d+' }, 'r3'), 'r1');
  assert.equal(visit({ kind: 'regex', value: '^/a/b' }, 'r4'), 'r1', 'a leading ^ holds in any full match');
  assert.equal(visit({ kind: 'regex', value: '(^/a/b|/c)' }, 'r6'), undefined, 'no common literal');
  assert.equal(index.visit('other', { kind: 'path', value: '/a/b/c' }, 'r5'), undefined);
});
