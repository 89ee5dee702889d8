// `portcullis config migrate`: removed and renamed options rewritten into today's form, in every
// format, with the changes listed; the result then validates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse as parseYaml, parseDocument } from 'yaml';
import { parse as parseToml } from 'smol-toml';
import { runMigrate } from '../../../src/cmd/config-command.js';
import { migrateDocument } from '../../../src/config/migrate.js';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { SIGN_IN_YAML } from '../../support/sign-in-config.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-migrate-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const OLD = `# An old config
insecure_server: true
address: ":8080"
${SIGN_IN_YAML}cache_service_url: https://cache.internal:5443 # the databroker
headers:
  X-Frame-Options: DENY
signing_key_algorithm: ES256
tracing_debug: true
idp_service_account: abc
services: all
jwt_claims_header: [email]
policy:
  - from: https://old.example.com
    to: http://10.0.0.1:80
    allowed_groups: [admins, ops]
routes:
  - from: https://new.example.com
    to: http://10.0.0.2:80
    allowed_groups: eng
    policy:
      allow:
        or:
          - groups: {has: staff}
`;

function capture(): PassThrough & { text(): string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return Object.assign(stream, { text: () => Buffer.concat(chunks).toString('utf8') });
}

function migrate(
  name: string,
  text: string,
  write = false,
): { code: number; out: string; err: string; path: string } {
  const path = join(dir, name);
  writeFileSync(path, text);
  const out = capture();
  const err = capture();
  const code = runMigrate(path, { write }, out, err);
  return { code, out: out.text(), err: err.text(), path };
}

test('a YAML config is rewritten into today form, keeping comments, and the changes are listed', () => {
  const { code, out, err } = migrate('old.yaml', OLD);
  assert.equal(code, 0, err);
  assert.match(out, /^# An old config/);
  assert.match(out, /databroker_service_url: https:\/\/cache.internal:5443 # the databroker/);
  const migrated = parseYaml(out) as Record<string, unknown>;
  assert.deepEqual(migrated.set_response_headers, { 'X-Frame-Options': 'DENY' });
  assert.equal(migrated.tracing_sampling_rate, 1);
  assert.deepEqual(migrated.jwt_claims_headers, ['email']);
  for (const gone of [
    'cache_service_url',
    'headers',
    'signing_key_algorithm',
    'tracing_debug',
    'idp_service_account',
    'policy',
    'jwt_claims_header',
  ]) {
    assert.ok(!(gone in migrated), `${gone} is still there`);
  }
  assert.deepEqual(migrated.routes, [
    {
      from: 'https://old.example.com',
      to: 'http://10.0.0.1:80',
      policy: [{ allow: { or: [{ 'claim/groups': 'admins' }, { 'claim/groups': 'ops' }] } }],
    },
    {
      from: 'https://new.example.com',
      to: 'http://10.0.0.2:80',
      policy: [
        { allow: { or: [{ 'claim/groups': { has: 'staff' } }] } },
        { allow: { or: [{ 'claim/groups': 'eng' }] } },
      ],
    },
  ]);
  for (const expected of [
    'cache_service_url: renamed cache_service_url to databroker_service_url',
    'headers: renamed headers to set_response_headers',
    'tracing_debug: replaced tracing_debug: true with tracing_sampling_rate: 1',
    'policy: moved the 1 routes under policy to the front of routes',
    'routes[0].allowed_groups: replaced allowed_groups with a policy rule allowing claim/groups admins, ops',
    'routes[1].policy.allow.or[0]: renamed the groups criterion to claim/groups',
    'signing_key_algorithm: removed signing_key_algorithm',
    'idp_service_account: removed idp_service_account',
  ]) {
    assert.ok(err.includes(`- ${expected}`), `missing "${expected}" in\n${err}`);
  }
  writeFileSync(join(dir, 'check.yaml'), out);
  const again = loadConfigFile(join(dir, 'check.yaml'), {});
  // The one problem left is the old config's own: a databroker URL while every service, the
  // databroker included, runs in this process (services: all). Migration renamed it faithfully.
  assert.deepEqual(
    again.problems.map(formatProblem).map((line) => line.replace(/:.*/s, '')),
    ['databroker_service_url'],
    'the migrated config validates but for the all-in-one conflict it carried',
  );
  assert.match(again.problems[0]?.message ?? '', /^must not be set in all-in-one mode \(services: all\)/);
});

test('--write replaces the file, keeps a .bak and prints the changes; a second run has nothing to do', () => {
  const { code, out, path } = migrate('inplace.yaml', 'insecure_server: true\nheaders: {X-A: b}\n', true);
  assert.equal(code, 0);
  assert.match(out, /1 change \(original kept as .*inplace\.yaml\.bak\)/);
  assert.equal(readFileSync(`${path}.bak`, 'utf8'), 'insecure_server: true\nheaders: {X-A: b}\n');
  assert.equal(readFileSync(path, 'utf8'), 'insecure_server: true\nset_response_headers: {X-A: b}\n');
  const out2 = capture();
  assert.equal(runMigrate(path, { write: true }, out2, capture()), 0);
  assert.match(out2.text(), /nothing to migrate/);
});

test('JSON, TOML and properties are migrated in their own format', () => {
  const json = migrate(
    'old.json',
    JSON.stringify({ insecure_server: true, cache_service_url: 'https://c:1', services: 'proxy,cache' }),
  );
  assert.deepEqual(JSON.parse(json.out), {
    insecure_server: true,
    databroker_service_url: 'https://c:1',
    services: 'proxy,databroker',
  });
  const toml = migrate(
    'old.toml',
    'insecure_server = true\n[headers]\nX-A = "b"\n[[policy]]\nfrom = "https://a.example.com"\nto = "http://a"\nallowed_groups = ["x"]\n',
  );
  const parsed = JSON.parse(JSON.stringify(parseToml(toml.out))) as Record<string, unknown>;
  assert.deepEqual(parsed.set_response_headers, { 'X-A': 'b' });
  assert.deepEqual((parsed.routes as Record<string, unknown>[])[0]?.policy, [
    { allow: { or: [{ 'claim/groups': 'x' }] } },
  ]);
  const props = migrate(
    'old.properties',
    'insecure_server=true\ntracing_debug=false\nrefresh_cooldown=5m\npolicy=[{"from":"https://a.example.com","to":"http://a","allowed_groups":["x"]}]\n',
  );
  assert.equal(props.code, 0);
  assert.match(
    props.out,
    /^insecure_server=true\nroutes=\[\{"from":"https:\/\/a.example.com","to":"http:\/\/a","policy":\[\{"allow":\{"or":\[\{"claim\/groups":"x"\}\]\}\}\]\}\]\n$/,
  );
});

test('policy_file is inlined under routes when it can be read', () => {
  writeFileSync(join(dir, 'routes.yaml'), '- from: https://p.example.com\n  to: http://p:80\n');
  const { code, out, err } = migrate(
    'pf.yaml',
    'insecure_server: true\npolicy_file: routes.yaml\nroutes:\n  - from: https://r.example.com\n    to: http://r:80\n',
  );
  assert.equal(code, 0, err);
  const routes = (parseYaml(out) as { routes: { from: string }[] }).routes.map((route) => route.from);
  assert.deepEqual(routes, ['https://p.example.com', 'https://r.example.com']);
  const missing = migrate('pf2.yaml', 'insecure_server: true\npolicy_file: nowhere.yaml\n');
  assert.equal(missing.code, 1, 'something is left for a person');
  assert.match(missing.err, /! policy_file: cannot inline nowhere\.yaml \(ENOENT\)/);
});

test('conflicts are left for a person: both old and new keys with different values', () => {
  const doc = parseDocument(
    'cache_service_url: https://a\ndatabroker_service_url: https://b\nheaders: {A: b}\nset_response_headers: {A: b}\n',
  );
  const changes = migrateDocument(doc, () => '');
  assert.deepEqual(changes, [
    { path: 'headers', message: 'removed headers: set_response_headers is already set to the same value' },
    {
      path: 'cache_service_url',
      message:
        'both cache_service_url and databroker_service_url are set with different values; merge them into databroker_service_url by hand',
      manual: true,
    },
  ]);
});

test('unreadable or malformed input is an error, not a stack trace', () => {
  const err = capture();
  assert.equal(runMigrate(join(dir, 'absent.yaml'), { write: false }, capture(), err), 1);
  assert.match(err.text(), /cannot read config file/);
  const bad = migrate('bad.yaml', 'a: [\n');
  assert.equal(bad.code, 1);
  assert.match(bad.err, /malformed YAML/);
  assert.equal(migrate('x.ini', 'a=1').code, 1);
  assert.ok(!existsSync(join(dir, 'bad.yaml.bak')));
});
