// Issue 33 items 2 and 3 through the real parts: `portcullis validate` refuses a regex Envoy's RE2
// would refuse, naming its key; a regex just under the program-size limit validate accepts is
// ACKed by a real Envoy (no NACK) and routes; a reload with a shadowed route is refused, naming
// both routes, and the last good config keeps serving.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';
import { proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { SIGN_IN_YAML } from '../support/sign-in-config.js';
import { waitFor } from '../support/wait.js';
import { checkEnvoyRegex } from '../../src/shared/re2-envoy.js';
import { RE2_MAX_PROGRAM_SIZE } from '../../src/shared/re2.js';
import { buildBootstrap } from '../../src/envoy/bootstrap.js';
import { locateEnvoy } from '../../src/envoy/locate.js';
import { validateBootstrap } from '../../src/envoy/supervisor.js';
import { seededRandom } from '../support/seeded-random.js';
import { TEST_GRPC_CREDENTIAL } from '../support/grpc-credential.js';

const bin = new URL('../../bin/portcullis.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'portcullis-regex-'));

function validate(routesYaml: string): { status: number | null; stderr: string } {
  const path = join(dir, `config-${Date.now()}-${Math.random().toString(16).slice(2)}.yaml`);
  writeFileSync(path, `insecure_server: true\naddress: ":8080"\n${SIGN_IN_YAML}routes:\n${routesYaml}`);
  const result = spawnSync(process.execPath, [bin, 'validate', '--config', path], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stderr: result.stderr };
}

/** `/` then as many optional 1000-letter runs as stay under the limit: near it, matches `/`. */
function nearLimitPattern(): { pattern: string; bound: number } {
  let best: { pattern: string; bound: number } | undefined;
  for (let runs = 1; runs < 500; runs += 1) {
    const pattern = `/${'(?:[a-z]{1000})?'.repeat(runs)}`;
    const checked = checkEnvoyRegex(pattern);
    if (!checked.ok) break;
    best = { pattern, bound: checked.programSizeBound };
  }
  assert.ok(best, 'some pattern fits');
  return best;
}

const ATOMS = [
  'a',
  '/',
  '.',
  '[^/]',
  '[a-z0-9_]',
  '\\d',
  '\\w',
  '\\pL',
  '(?i:x)',
  '[[:alpha:]]',
  '\\s',
  '\\b',
];
const MORE = [
  '(?s:.)',
  '[ace-gk]',
  '\\pN',
  '\\p{Greek}',
  '\\x{FF}',
  '\\x{100}',
  '\\p{Cn}',
  '\\C',
  '\\Q.+\\E',
];

/** A random RE2 pattern of nested concatenations, alternations and repetitions. */
function randomPattern(random: () => number, depth = 0): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  if (depth > 3 || random() < 0.3) return pick([...ATOMS, ...MORE]);
  const inner = (): string => randomPattern(random, depth + 1);
  const low = Math.floor(random() * 6);
  return pick([
    () => inner() + inner(),
    () => `(${inner()}|${inner()})`,
    () => `(?:${inner()})${pick(['*', '+', '?', '*?'])}`,
    () => `(?:${inner()}){${low},${low + Math.floor(random() * 300)}}`,
  ])();
}

describe('validate and RE2 in Envoy', () => {
  test("every pattern validate accepts, Envoy's RE2 compiles under the limit, within the bound", async () => {
    const random = seededRandom(33);
    const accepted: { pattern: string; bound: number }[] = [];
    for (let index = 0; accepted.length < 150 && index < 2000; index += 1) {
      const pattern = `/${randomPattern(random)}`;
      const checked = checkEnvoyRegex(pattern);
      if (checked.ok && !accepted.some((seen) => seen.pattern === pattern))
        accepted.push({ pattern, bound: checked.programSizeBound });
    }
    const bootstrap = buildBootstrap({
      ads: { address: '127.0.0.1', port: 1, credential: TEST_GRPC_CREDENTIAL },
      admin: { port: 0 },
    });
    const runtime = bootstrap.layered_runtime as { layers: { static_layer: Record<string, number> }[] };
    const layer = runtime.layers[0]?.static_layer;
    assert.equal(layer?.['re2.max_program_size.error_level'], RE2_MAX_PROGRAM_SIZE, 'the bootstrap limit');
    if (layer) layer['re2.max_program_size.warn_level'] = 0; // Envoy then logs every program size
    const hcm = {
      '@type':
        'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
      stat_prefix: 'regex',
      route_config: {
        virtual_hosts: [
          {
            name: 'all',
            domains: ['*'],
            routes: accepted.map(({ pattern }) => ({
              match: { safe_regex: { regex: pattern } },
              direct_response: { status: 200 },
            })),
          },
        ],
      },
      http_filters: [
        {
          name: 'envoy.filters.http.router',
          typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' },
        },
      ],
    };
    const listener = {
      name: 'regex',
      address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
      filter_chains: [{ filters: [{ name: 'hcm', typed_config: hcm }] }],
    };
    const result = await validateBootstrap((await locateEnvoy()).path, {
      ...bootstrap,
      static_resources: { ...(bootstrap.static_resources as object), listeners: [listener] },
    });
    assert.ok(result.ok, result.output.slice(0, 2000));
    const sizes = new Map<string, number>();
    for (const found of result.output.matchAll(/regex '(.*)' RE2 program size of (\d+)/g))
      sizes.set(found[1] ?? '', Number(found[2]));
    for (const { pattern, bound } of accepted) {
      const size = sizes.get(pattern);
      assert.ok(size !== undefined, `Envoy logged the size of ${pattern}`);
      assert.ok(size <= bound, `${pattern}: Envoy ${size} > bound ${bound}`);
    }
  });

  test('validate refuses /(a{1000}){1000} and an over-limit program, naming the key, no stack trace', () => {
    const result = validate(
      [
        '  - from: https://a.example.com',
        '    to: http://10.0.0.1:8080',
        "    regex: '/(a{1000}){1000}'",
        '  - from: https://b.example.com',
        '    to: http://10.0.0.1:8080',
        `    regex_rewrite_pattern: '${'[^/]{1000}'.repeat(40)}'`,
        '    regex_rewrite_substitution: /x',
        '',
      ].join('\n'),
    );
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /routes\[0\]\.regex: .*invalid repeat count/);
    assert.match(result.stderr, /routes\[1\]\.regex_rewrite_pattern: .*over Envoy's limit of 100000/);
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  });

  test('validate refuses a route that an earlier prefix on the same host shadows, naming both', () => {
    const result = validate(
      [
        '  - from: https://app.example.com',
        '    to: http://10.0.0.1:8080',
        '    allow_public_unauthenticated_access: true',
        '  - from: https://app.example.com',
        '    prefix: /admin',
        '    to: http://10.0.0.1:8080',
        '    allowed_users: [ada@example.com]',
        '',
      ].join('\n'),
    );
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /routes\[1\]: never matches: routes\[0\] comes first .*prefix "\/"/);
  });
});

describe('through a real Envoy', () => {
  let upstream: EchoUpstream;
  let portcullis: TestPortcullis;
  const stable = (): Record<string, unknown> => ({
    allow_public_unauthenticated_access: true,
    from: 'https://stable.test',
    to: upstream.url,
  });

  before(async () => {
    upstream = await startEchoUpstream({ id: 'u' });
    portcullis = await startPortcullis({ routes: [stable()] });
  });

  after(async () => {
    await portcullis?.stop();
    await upstream?.stop();
  });

  const failures = (): number => portcullis.running.reloader.current().failures;

  test('a regex just under the limit validate checks is ACKed by Envoy and routes', async () => {
    const near = nearLimitPattern();
    assert.ok(near.bound > 0.95 * RE2_MAX_PROGRAM_SIZE, `near the limit: ${near.bound}`);
    const validated = validate(
      `  - from: https://regex.test\n    to: http://10.0.0.1:8080\n    regex: '${near.pattern}'\n`,
    );
    assert.equal(validated.status, 0, validated.stderr);
    const nacks = portcullis.running.ads.stats().nacks.routes;
    portcullis.writeConfig({
      routes: [
        stable(),
        {
          allow_public_unauthenticated_access: true,
          from: 'https://regex.test',
          regex: near.pattern,
          to: upstream.url,
        },
      ],
    });
    await waitFor(
      async () =>
        (await proxyRequest(portcullis.proxyPort, 'regex.test', `/${'q'.repeat(1000)}`)).status === 200,
      {
        what: 'the near-limit regex route to answer',
        timeoutMs: 15_000,
      },
    );
    await portcullis.waitForEnvoyToApply('the near-limit regex route');
    assert.equal(portcullis.running.ads.stats().nacks.routes, nacks, 'Envoy NACKed nothing');
    assert.equal(
      (await proxyRequest(portcullis.proxyPort, 'regex.test', '/x')).status,
      404,
      'full match only',
    );
  });

  test('a reload with a shadowed route is refused, naming both, and the last good config serves', async () => {
    const before = failures();
    const good = portcullis.running.reloader.lastGoodBuild();
    portcullis.writeConfig({
      routes: [
        stable(),
        { allow_public_unauthenticated_access: true, from: 'https://open.test', to: upstream.url },
        { from: 'https://open.test', prefix: '/admin', to: upstream.url, allowed_users: ['ada@example.com'] },
      ],
    });
    await waitFor(async () => failures() > before, { what: 'the shadowing reload to be rejected' });
    const logged = portcullis.logs.filter((record) => record.msg?.includes('config reload rejected')).at(-1);
    const problems = (logged?.obj as { problems: string[] } | undefined)?.problems.join('\n') ?? '';
    assert.match(problems, /routes\[2\]: never matches: routes\[1\] comes first .*"\/admin"/);
    assert.equal(portcullis.running.reloader.lastGoodBuild(), good, 'the last good build stays');
    assert.equal((await proxyRequest(portcullis.proxyPort, 'stable.test', '/')).status, 200);
    assert.equal((await proxyRequest(portcullis.proxyPort, 'open.test', '/admin')).status, 404);
  });
});
