// The route locator decides as Envoy does which route a URL reaches: exact hosts before wildcards,
// the catch-all's authority regex, path matchers in order, and never the authenticate host; and
// the origins Portcullis serves a located route on (the listener's scheme and port, `from`'s port).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createRouteLocator } from '../../../src/authenticate/route-locator.js';
import type { IR, IRPathMatch } from '../../../src/ir/types.js';

function route(
  id: string,
  match: IRPathMatch,
  idpId = 'idp',
  authorityRegex?: string,
  fromPort?: number,
): unknown {
  return { id, match, idpId, authorityRegex, fromPort };
}

const ir = {
  listener: { port: 443, tls: { certificates: [] } },
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
      name: 'lb.example.org',
      domains: ['lb.example.org'],
      routes: [route('from-port', { kind: 'prefix', value: '/' }, 'idp', undefined, 8443)],
    },
    {
      name: 'slow.example.org',
      domains: ['slow.example.org'],
      routes: [route('redos', { kind: 'regex', value: '/(a+)+' })],
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
    origins: ['https://app.example.com'],
    origin: 'https://app.example.com',
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

test("a located route's origins: `from`'s port, the authenticate URL's, the listener's", () => {
  const locator = createRouteLocator(ir);
  const located = locator.locate(new URL('http://x.example.com:8081/p'));
  assert.deepEqual(located?.origins, ['https://x.example.com'], "the URL's own scheme and port say nothing");
  const lb = locator.locate(new URL('https://lb.example.org/'));
  assert.deepEqual(lb?.origins, ['https://lb.example.org:8443', 'https://lb.example.org']);
  assert.equal(lb?.origin, 'https://lb.example.org:8443', "`from`'s port is where users come from");
  // A plain listener on 18080 behind a load balancer that serves https://auth.example.com.
  const plain = createRouteLocator({ ...ir, listener: { ...ir.listener, port: 18080, tls: undefined } });
  assert.deepEqual(plain.locate(new URL('https://app.example.com/'))?.origins, [
    'https://app.example.com',
    'http://app.example.com:18080',
  ]);
  const direct = createRouteLocator({
    ...ir,
    listener: { ...ir.listener, port: 18443 },
    authorize: { ...ir.authorize, authenticateUrl: 'https://auth.example.com:18443' },
  });
  assert.deepEqual(direct.locate(new URL('https://app.example.com/'))?.origins, [
    'https://app.example.com:18443',
  ]);
});

test('serves: exactly the origins of some route of that host', () => {
  const locator = createRouteLocator(ir);
  const serves = (origin: string): boolean => locator.serves(new URL(origin));
  assert.equal(serves('https://app.example.com/'), true);
  assert.equal(serves('https://app.example.com:443/'), true);
  assert.equal(serves('http://app.example.com/'), false, 'not over plain http');
  assert.equal(serves('https://app.example.com:8081/'), false, 'not on another port');
  assert.equal(serves('https://lb.example.org:8443/'), true);
  assert.equal(serves('https://x.example.com/'), true, 'a wildcard host');
  assert.equal(serves('https://abcz.test/'), true);
  assert.equal(serves('https://other.test/'), false, 'the authority regex must match');
  assert.equal(serves('https://auth.example.com/'), false, 'the authenticate host is no route host');
  assert.equal(serves('https://nothing.example.net/'), false);
});

test('route regexes run with RE2: a pathological pattern answers at once', () => {
  const locator = createRouteLocator(ir);
  const started = performance.now();
  const path = `/${'a'.repeat(48)}!`;
  assert.equal(locator.locate(new URL(`https://slow.example.org${path}`)), undefined);
  assert.equal(locator.locate(new URL(`https://slow.example.org/${'a'.repeat(48)}`))?.routeId, 'redos');
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 500, `locating took ${Math.round(elapsed)} ms`);
});

test('a locator built from the previous one answers as one built fresh, and keeps the hosts handed over unchanged', () => {
  const urls = [
    'https://app.example.com/api/x',
    'https://app.example.com/',
    'https://x.example.com/y',
    'https://x.b.example.com/r/12',
    'https://intranet.corp/z',
    'https://abcz.test/',
    'https://new.example.net/',
    'https://lb.example.org:8443/',
    'https://slow.example.org/aaa',
  ];
  const answers = (locator: ReturnType<typeof createRouteLocator>): unknown =>
    urls.map((url) => [locator.locate(new URL(url)), locator.serves(new URL(url))]);
  const first = createRouteLocator(ir);
  const [app, ...rest] = ir.virtualHosts;
  assert.ok(app !== undefined);
  const changedApp = { ...app, routes: [route('exact-root', { kind: 'path', value: '/' })] } as typeof app;
  const added = {
    name: 'new.example.net',
    domains: ['NEW.example.net'],
    routes: [route('added', { kind: 'prefix', value: '/' })],
  } as unknown as typeof app;
  const variants: [string, IR][] = [
    ['one host changed', { ...ir, virtualHosts: [changedApp, ...rest] }],
    ['one host added first', { ...ir, virtualHosts: [added, app, ...rest] }],
    ['hosts removed', { ...ir, virtualHosts: rest.filter((_, i) => i % 2 === 0) }],
    ['reordered', { ...ir, virtualHosts: [...rest].reverse() }],
    ['IR-wide: the listener port', { ...ir, listener: { ...ir.listener, port: 8443 } }],
  ];
  for (const [name, next] of variants) {
    const reused = createRouteLocator(next, first);
    assert.deepEqual(answers(reused), answers(createRouteLocator(next)), name);
  }
  const kept = createRouteLocator({ ...ir, virtualHosts: [changedApp, ...rest] }, first);
  assert.equal(kept.hosts[1], first.hosts[1], 'an unchanged host keeps its compiled matchers');
  assert.notEqual(kept.hosts[0], first.hosts[0], 'a changed host is compiled again');
});

test('a locator patched from `changes` equals a fresh one; wildcards, shared domains and a stale base index in full', () => {
  const urls = [
    'https://app.example.com/api/x',
    'https://app.example.com/',
    'https://x.example.com/y',
    'https://x.b.example.com/r/12',
    'https://intranet.corp/z',
    'https://abcz.test/',
    'https://new.example.net/',
    'https://lb.example.org:8443/',
    'https://slow.example.org/aaa',
  ];
  const ids = (routes: readonly { readonly route: { readonly id: string } }[] | undefined): unknown =>
    routes?.map((r) => r.route.id);
  const content = (locator: ReturnType<typeof createRouteLocator>): unknown => ({
    answers: urls.map((url) => [locator.locate(new URL(url)), locator.serves(new URL(url))]),
    hosts: locator.hosts.map((host) => [host.vhost, host.domains, ids(host.routes)]),
    exact: [...locator.index.exact].map(([domain, routes]) => [domain, ids(routes)]).sort(),
    suffixes: locator.index.suffixes.map((w) => [w.affix, ids(w.routes)]),
    prefixes: locator.index.prefixes.map((w) => [w.affix, ids(w.routes)]),
    fallback: ids(locator.index.fallback),
    exactUnique: locator.index.exactUnique,
  });
  const first = createRouteLocator(ir);
  const [app, ...rest] = ir.virtualHosts;
  assert.ok(app !== undefined);
  const changedApp = { ...app, routes: [route('exact-root', { kind: 'path', value: '/' })] } as typeof app;
  const added = {
    name: 'new.example.net',
    domains: ['NEW.example.net'],
    routes: [route('added', { kind: 'prefix', value: '/' })],
  } as unknown as typeof app;
  const patchable: [string, IR, string[]][] = [
    ['one host changed', { ...ir, virtualHosts: [changedApp, ...rest] }, [app.name]],
    ['one host added first', { ...ir, virtualHosts: [added, app, ...rest] }, [added.name]],
    [
      'a host removed',
      { ...ir, virtualHosts: [app, ...rest.filter((h) => h.name !== 'lb.example.org')] },
      ['lb.example.org'],
    ],
  ];
  for (const [name, next, named] of patchable) {
    const patched = createRouteLocator(next, first, { base: ir, virtualHosts: new Set(named) });
    assert.deepEqual(content(patched), content(createRouteLocator(next)), name);
    assert.equal(
      patched.index.suffixes,
      first.index.suffixes,
      `${name}: patched, wildcards kept as they were`,
    );
    assert.notEqual(patched.index.exact, first.index.exact, `${name}: the previous map is copied`);
  }
  const suffixHost = rest[0];
  assert.ok(suffixHost !== undefined && suffixHost.domains[0] === '*.example.com');
  const full: [string, IR, string[], IR][] = [
    ['a wildcard host removed', { ...ir, virtualHosts: [app, ...rest.slice(1)] }, [suffixHost.name], ir],
    [
      'a domain another host names',
      { ...ir, virtualHosts: [app, ...rest, { ...added, domains: ['app.example.com'] }] },
      [added.name],
      ir,
    ],
    [
      'a base that is not the previous IR',
      { ...ir, virtualHosts: [changedApp, ...rest] },
      [app.name],
      { ...ir },
    ],
  ];
  for (const [name, next, named, base] of full) {
    const built = createRouteLocator(next, first, { base, virtualHosts: new Set(named) });
    assert.deepEqual(content(built), content(createRouteLocator(next)), name);
    assert.notEqual(built.index.suffixes, first.index.suffixes, `${name}: indexed in full`);
  }
  // A locator whose IR names a domain twice is never patched (the first host's must win).
  const shared = createRouteLocator({
    ...ir,
    virtualHosts: [...ir.virtualHosts, { ...added, domains: ['app.example.com'] }],
  });
  assert.equal(shared.index.exactUnique, false);
});
