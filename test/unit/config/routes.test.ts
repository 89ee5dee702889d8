// Routes: from/to rules, TCP routes, weights, redirects and responses, access shortcuts, and the
// routes/policy keys in files and the environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, b64, base, parse, problems, valid } from './helpers.js';

const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });

test('a from with a path fails with exactly the message operators know', () => {
  const list = problems(route({ from: 'https://httpbin.corp.example/some/path' }));
  assert.ok(
    list.includes(
      'routes[0].from: config: policy source url (https://httpbin.corp.example/some/path) contains a path, but it should be set using the path field instead',
    ),
    list.join('\n'),
  );
  valid(route({ from: 'https://httpbin.corp.example/' }));
});

test('from and to need a scheme and a host', () => {
  assertProblem(
    problems(route({ from: 'app.example.com' })),
    'routes[0].from',
    'is not a URL with a scheme and host',
  );
  assertProblem(problems(route({ from: 'app.example.com:443' })), 'routes[0].from', '');
  assertProblem(problems(route({ from: 'ftp://app.example.com' })), 'routes[0].from', 'has scheme ftp');
  assertProblem(problems(route({ to: 'app.internal:80' })), 'routes[0].to', '');
  assertProblem(problems(route({ to: 'http://' })), 'routes[0].to', 'is not a URL');
  assertProblem(problems(route({ from: '' })), 'routes[0].from', 'is required');
  assertProblem(problems(base({ routes: [{ to: 'http://a' }] })), 'routes[0].from', 'is required');
  assertProblem(
    problems(base({ routes: [{ from: 'https://a.example.com' }] })),
    'routes[0].to',
    'is required',
  );
});

test('tcp+https from-URLs take tcp:// destinations only, with ports', () => {
  const config = valid(route({ from: 'tcp+https://redis.example.com:6379', to: 'tcp://10.0.0.5:6379' }));
  assert.equal(config.routes[0]?.kind, 'tcp');
  assertProblem(
    problems(route({ from: 'tcp+https://redis.example.com:6379', to: 'http://10.0.0.5:6379' })),
    'routes[0].to',
    'takes tcp:// destinations only',
  );
  assertProblem(
    problems(route({ to: 'tcp://10.0.0.5:6379' })),
    'routes[0].to',
    'tcp:// destinations need a TCP route',
  );
  assertProblem(
    problems(route({ from: 'tcp+https://redis.example.com', to: 'tcp://a:1' })),
    'routes[0].from',
    'needs the port',
  );
  assertProblem(
    problems(route({ from: 'tcp+https://redis.example.com:6379', to: 'tcp://a' })),
    'routes[0].to',
    'needs a port',
  );
  assertProblem(
    problems(route({ from: 'tcp+https://r.example.com:1', to: 'tcp://a:1', prefix: '/x' })),
    'routes[0]',
    'matches by host and port only',
  );
});

test('weighted to rules: all or none, never zero', () => {
  const config = valid(route({ to: ['http://a:8080,1', 'http://b:8080,3'] }));
  assert.deepEqual(
    config.routes[0]?.to.map((to) => to.weight),
    [1, 3],
  );
  assertProblem(
    problems(route({ to: ['http://a:8080,1', 'http://b:8080'] })),
    'routes[0].to',
    'either no weights should be provided',
  );
  assertProblem(
    problems(route({ to: ['http://a:8080,0'] })),
    'routes[0].to[0]',
    'zero load balancing weight not permitted',
  );
});

test('an empty to list is a route with no destinations yet: a warning, and a TCP route still needs one', () => {
  const parsed = parse(route({ to: [] }));
  assert.deepEqual(parsed.problems, []);
  assert.deepEqual(parsed.config?.routes[0]?.to, []);
  assert.deepEqual(
    parsed.warnings.map((warning) => `${warning.path}: ${warning.message}`),
    ['routes[0].to: has no destinations: the route answers 503 (no healthy upstream) until it has some'],
  );
  assertProblem(
    problems(base({ routes: [{ from: 'tcp+https://db.example.com:5432', to: [] }] })),
    'routes[0].to',
    'is required',
  );
});

test("each destination carries its URL's scheme, host, port (else the scheme's) and path", () => {
  const config = valid(
    route({
      to: [
        'http://a.internal,1',
        'https://b.internal,2',
        'h2c://10.0.0.3:9000,3',
        'https://[2001:db8::1]:8443/base/,4',
        'http://LOCALHOST:80,5',
      ],
    }),
  );
  const destinations = config.routes[0]?.to ?? [];
  assert.deepEqual(
    destinations.map(({ protocol, hostname, port, pathname }) => [protocol, hostname, port, pathname]),
    [
      ['http:', 'a.internal', 80, '/'],
      ['https:', 'b.internal', 443, '/'],
      ['h2c:', '10.0.0.3', 9000, '/'],
      ['https:', '[2001:db8::1]', 8443, '/base/'],
      ['http:', 'localhost', 80, '/'],
    ],
  );
  for (const { url, href, protocol, hostname, pathname } of destinations) {
    assert.deepEqual(
      [href, protocol, hostname, pathname],
      [url.href, url.protocol, url.hostname, url.pathname || '/'],
      url.href,
    );
  }
});

test("a route carries its from URL's href and lower-cased host, read once at parse", () => {
  const [web, tcp] = valid(
    base({
      routes: [
        { from: 'https://App.Example.com:8443', to: 'http://10.0.0.1:8080' },
        { from: 'tcp+https://DB.Example.com:5432', to: 'tcp://10.0.0.2:5432' },
      ],
    }),
  ).routes;
  assert.ok(web && tcp);
  assert.deepEqual([web.from_href, web.from_host], [web.from.href, 'app.example.com']);
  assert.deepEqual([tcp.from_href, tcp.from_host], [tcp.from.href, 'db.example.com']);
});

test('redirect codes must be 301, 302, 303, 307 or 308', () => {
  for (const code of [301, 302, 303, 307, 308]) {
    assert.equal(
      valid(route({ to: undefined, redirect: { host_redirect: 'b.example.com', response_code: code } }))
        .routes[0]?.redirect?.response_code,
      code,
    );
  }
  for (const code of [300, 304, 200, '301x']) {
    const list = problems(route({ to: undefined, redirect: { https_redirect: true, response_code: code } }));
    assertProblem(
      list,
      'routes[0].redirect.response_code',
      typeof code === 'number' && code >= 100
        ? `unsupported redirect response code ${code} (supported values: 301, 302, 303, 307, 308)`
        : 'expected a whole number',
    );
  }
  assertProblem(
    problems(route({ to: undefined, redirect: { path_redirect: '/a', prefix_rewrite: '/b' } })),
    'routes[0].redirect',
    'set only one of path_redirect and prefix_rewrite',
  );
  assertProblem(
    problems(route({ to: undefined, redirect: { hots_redirect: 'x' } })),
    'routes[0].redirect.hots_redirect',
    'unknown redirect field',
  );
});

test('exactly one of to, redirect and response', () => {
  assertProblem(
    problems(route({ redirect: { https_redirect: true } })),
    'routes[0].redirect',
    'set only one of to and redirect',
  );
  assertProblem(
    problems(route({ response: { status: 200 } })),
    'routes[0].response',
    'set only one of to and response',
  );
  const response = valid(route({ to: undefined, response: { status: 403, body: 'no' } })).routes[0]?.response;
  assert.deepEqual(response, { status: 403, body: 'no' });
  assertProblem(
    problems(route({ to: undefined, response: { body: 'x' } })),
    'routes[0].response.status',
    'is required',
  );
});

test('public access cannot be combined with allow lists or any-user; any-user cannot be combined with allow lists', () => {
  for (const extra of [
    { allowed_users: ['a@example.com'] },
    { allowed_domains: ['example.com'] },
    { allow_any_authenticated_user: true },
  ]) {
    assertProblem(
      problems(route({ allow_public_unauthenticated_access: true, ...extra })),
      'routes[0].allow_public_unauthenticated_access',
      'cannot be combined',
    );
  }
  for (const extra of [{ allowed_users: ['a@example.com'] }, { allowed_domains: ['example.com'] }]) {
    assertProblem(
      problems(route({ allow_any_authenticated_user: true, ...extra })),
      'routes[0].allow_any_authenticated_user',
      'cannot be combined',
    );
  }
  const config = valid(
    route({
      allowed_users: 'a@example.com,b@example.com',
      allowed_domains: ['example.org'],
      cors_allow_preflight: true,
    }),
  );
  assert.deepEqual(config.routes[0]?.allowed_users, ['a@example.com', 'b@example.com']);
  assert.equal(config.routes[0]?.cors_allow_preflight, true);
});

test('allowed_idp_claims, pass_identity_headers and per-route IdP credentials', () => {
  const config = valid(
    route({
      allowed_idp_claims: { groups: ['admins'], level: 3 },
      pass_identity_headers: true,
    }),
  );
  const parsed = config.routes[0];
  assert.deepEqual(parsed?.allowed_idp_claims, { groups: ['admins'], level: [3] });
  assert.equal(parsed?.pass_identity_headers, true);
  const perRoute = valid(route({ idp_client_id: 'a', idp_client_secret: 'b' })).routes[0];
  assert.equal(perRoute?.idp_client_id, 'a');
  assert.equal(perRoute?.idp_client_secret?.reveal(), 'b');
  assert.equal(
    valid(route({})).routes[0]?.pass_identity_headers,
    undefined,
    'unset falls back to the global setting',
  );
  assertProblem(
    problems(route({ idp_client_id: 'a' })),
    'routes[0]',
    'need both idp_client_id and idp_client_secret',
  );
  assertProblem(
    problems(route({ allowed_idp_claims: { groups: [{ a: 1 }] } })),
    'routes[0].allowed_idp_claims.groups',
    'expected a value or a list',
  );
});

test('a regex that does not compile, or uses what RE2 lacks, is an error at its key', () => {
  const refused = "is not a regular expression Envoy's RE2 accepts";
  assertProblem(problems(route({ regex: '^/(a' })), 'routes[0].regex', refused);
  assertProblem(problems(route({ regex: '^/(?=a)' })), 'routes[0].regex', 'unsupported Perl syntax');
  assertProblem(problems(route({ regex: '^/(a)\\1' })), 'routes[0].regex', 'invalid escape sequence');
  assertProblem(
    problems(route({ regex_rewrite_pattern: '(', regex_rewrite_substitution: 'x' })),
    'routes[0].regex_rewrite_pattern',
    refused,
  );
});

test("a regex Envoy's RE2 would refuse is an error at its key, never a NACK", () => {
  // RE2 caps nested repetition at 1000 in all: Envoy refuses this with "bad repetition operator".
  assertProblem(problems(route({ regex: '/(a{1000}){1000}' })), 'routes[0].regex', 'invalid repeat count');
  // Within RE2's syntax but over the program-size limit the bootstrap gives Envoy.
  assertProblem(
    problems(route({ regex: '/' + '[^/]{1000}'.repeat(30) })),
    'routes[0].regex',
    "over Envoy's limit",
  );
  assertProblem(
    problems(route({ regex_rewrite_pattern: '[^/]{1000}'.repeat(30), regex_rewrite_substitution: 'x' })),
    'routes[0].regex_rewrite_pattern',
    "over Envoy's limit",
  );
  // Envoy's RE2 reads patterns as Latin-1: \x{100} is an error there, a non-ASCII letter is bytes.
  assertProblem(problems(route({ regex: '/\\x{100}' })), 'routes[0].regex', 'above \\x{FF}');
  assertProblem(problems(route({ regex: '/caf\u00e9' })), 'routes[0].regex', 'non-ASCII');
  // What Envoy takes passes: an escaped backslash before x{100} is a literal, \x{FF} is a byte.
  valid(route({ regex: '/\\\\x{100}' }));
  valid(route({ regex: '/[a-z]{1000}\\x{FF}' }));
});

test('bad durations are errors with their key path', () => {
  assertProblem(problems(route({ timeout: '10' })), 'routes[0].timeout', 'is not a duration');
  assertProblem(problems(route({ idle_timeout: 5 })), 'routes[0].idle_timeout', 'expected a duration');
});

test('routes from the environment: JSON, or base64 of YAML; ROUTES wins over the file', () => {
  const json = JSON.stringify([{ from: 'https://env.example.com', to: 'http://e:80' }]);
  assert.equal(valid(base(), { ROUTES: json }).routes[0]?.from.hostname, 'env.example.com');
  const yaml = b64('- from: https://yaml.example.com\n  to: http://y:80\n');
  assert.equal(valid(base(), { ROUTES: yaml }).routes[0]?.from.hostname, 'yaml.example.com');
  const legacy = parse(base({ routes: undefined }), { POLICY: json });
  assert.equal(legacy.config?.routes[0]?.from.hostname, 'env.example.com');
  assert.ok(legacy.warnings.some((warning) => warning.path === 'POLICY'));
  assertProblem(problems(base(), { ROUTES: 'not json' }), 'ROUTES', 'expected a JSON list of routes');
  assertProblem(problems(base({ routes: { from: 'x' } })), 'routes', 'expected a list of routes');
});

test('redirect fields have the forms a Location header takes, and a redirect must change the URL', () => {
  const redirect = (fields: Record<string, unknown>): string[] =>
    problems(route({ to: undefined, redirect: fields }));
  const all = {
    scheme_redirect: 'http',
    host_redirect: 'B.example.com',
    port_redirect: 8443,
    path_redirect: '/new?x=1',
    response_code: 308,
    strip_query: true,
  };
  assert.deepEqual(valid(route({ to: undefined, redirect: all })).routes[0]?.redirect, all);
  assertProblem(
    redirect({ host_redirect: 'https://b.example.com' }),
    'routes[0].redirect.host_redirect',
    'expected a host name or IP address',
  );
  assertProblem(
    redirect({ host_redirect: 'b.example.com/x' }),
    'routes[0].redirect.host_redirect',
    'path_redirect',
  );
  assertProblem(
    redirect({ scheme_redirect: 'ftp' }),
    'routes[0].redirect.scheme_redirect',
    'must be http or https',
  );
  assertProblem(
    redirect({ path_redirect: 'new' }),
    'routes[0].redirect.path_redirect',
    'must start with "/"',
  );
  assertProblem(redirect({ prefix_rewrite: '/a b' }), 'routes[0].redirect.prefix_rewrite', 'whitespace');
  assertProblem(redirect({ port_redirect: 0 }), 'routes[0].redirect.port_redirect', 'between 1 and 65535');
  assertProblem(
    redirect({ https_redirect: true, scheme_redirect: 'https' }),
    'routes[0].redirect',
    'set only one of https_redirect and scheme_redirect',
  );
  for (const nothing of [{}, { response_code: 302 }, { https_redirect: false }]) {
    assertProblem(
      redirect(nothing),
      'routes[0].redirect',
      'changes nothing, so it would redirect to the same URL',
    );
  }
  assertProblem(
    problems(route({ to: undefined, redirect: 'https://b' })),
    'routes[0].redirect',
    'expected a redirect map',
  );
});

test('a response body is text of at most 4096 bytes; the status is 200-599', () => {
  const body = (text: unknown): string[] =>
    problems(route({ to: undefined, response: { status: 200, body: text } }));
  assert.equal(
    valid(route({ to: undefined, response: { status: 200, body: 'é'.repeat(2048) } })).routes[0]?.response
      ?.body.length,
    2048,
  );
  assertProblem(
    body('é'.repeat(2049)),
    'routes[0].response.body',
    'is 4098 bytes; a response body is at most 4096 bytes',
  );
  assertProblem(body(12), 'routes[0].response.body', 'expected a string');
  assert.deepEqual(valid(route({ to: undefined, response: { status: 204 } })).routes[0]?.response, {
    status: 204,
    body: '',
  });
  for (const status of [199, 600, 'ok']) {
    assertProblem(problems(route({ to: undefined, response: { status } })), 'routes[0].response.status', '');
  }
  assertProblem(
    problems(route({ to: undefined, response: { status: 200, headers: {} } })),
    'routes[0].response.headers',
    'unknown response field',
  );
});

test('a route that answers by itself warns about forwarding keys (ignored), naming each; access and response headers apply', () => {
  const answering = { to: undefined, response: { status: 200, body: 'hi' } };
  const result = parse(
    route({
      ...answering,
      timeout: '5s',
      tls_skip_verify: true,
      set_request_headers: { 'X-A': 'b' },
      prefix_rewrite: '/x',
      allow_websockets: false, // says nothing: let through
      remove_request_headers: [],
    }),
  );
  assert.deepEqual(result.problems, [], 'forwarding keys on an answering route still load');
  for (const key of ['timeout', 'tls_skip_verify', 'set_request_headers', 'prefix_rewrite'])
    assertProblem(
      result.warnings,
      `routes[0].${key}`,
      'does not apply to a route with `response` and is ignored',
    );
  assert.equal(result.warnings.length, 4, result.warnings.map((w) => w.message).join('\n'));
  assertProblem(
    parse(route({ to: undefined, redirect: { https_redirect: true }, load_balancing_policy: 'MAGLEV' }))
      .warnings,
    'routes[0].load_balancing_policy',
    'does not apply to a route with `redirect`',
  );
  const kept = valid(
    route({
      ...answering,
      prefix: '/status',
      allowed_users: ['ada@example.com'],
      set_response_headers: { 'Content-Type': 'text/plain' },
    }),
  ).routes[0];
  assert.deepEqual(
    [kept?.prefix, kept?.allowed_users, kept?.set_response_headers, kept?.to],
    ['/status', ['ada@example.com'], { 'Content-Type': 'text/plain' }, []],
  );
});

test('a TCP route warns about HTTP-only keys (ignored), naming each', () => {
  const result = parse(
    base({
      routes: [
        {
          from: 'tcp+https://db.example.com:5432',
          to: 'tcp://10.0.0.5:5432',
          allow_public_unauthenticated_access: true,
          set_request_headers: { 'X-A': 'b' },
          tls_skip_verify: true,
          pass_identity_headers: false, // says nothing: let through
          timeout: '1h', // applies to a tunnel
        },
      ],
    }),
  );
  assert.deepEqual(result.problems, []);
  const lines = result.warnings.map((warning) => `${warning.path}: ${warning.message}`);
  for (const key of ['set_request_headers', 'tls_skip_verify'])
    assertProblem(lines, `routes[0].${key}`, 'does not apply to a TCP route and is ignored');
  assert.equal(lines.filter((line) => line.includes('TCP route')).length, 2, lines.join('\n'));
});
