// Config files in every format: the same config from YAML, JSON, TOML and properties; malformed
// files give the file and line, never a stack trace; unknown extensions, huge and unreadable files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFile, MAX_CONFIG_BYTES } from '../../../src/config/load-file.js';
import { parseProperties } from '../../../src/config/properties.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { SIGN_IN, SIGN_IN_YAML, signInLines } from '../../support/sign-in-config.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-formats-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const SAME_CONFIG: Record<string, string> = {
  'same.yaml': `insecure_server: true
address: ":8080"
${signInLines('yaml')}idp_scopes: [openid, email]
set_response_headers:
  X-Frame-Options: DENY
routes:
  - from: https://app.example.com
    to: ["http://10.0.0.1:80,1", "http://10.0.0.2:80,2"]
    policy:
      - allow:
          or:
            - email: { is: a@example.com }
`,
  'same.json': JSON.stringify({
    insecure_server: true,
    address: ':8080',
    ...SIGN_IN,
    idp_scopes: ['openid', 'email'],
    set_response_headers: { 'X-Frame-Options': 'DENY' },
    routes: [
      {
        from: 'https://app.example.com',
        to: ['http://10.0.0.1:80,1', 'http://10.0.0.2:80,2'],
        policy: [{ allow: { or: [{ email: { is: 'a@example.com' } }] } }],
      },
    ],
  }),
  'same.toml': `insecure_server = true
address = ":8080"
${signInLines('toml')}idp_scopes = ["openid", "email"]

[set_response_headers]
X-Frame-Options = "DENY"

[[routes]]
from = "https://app.example.com"
to = ["http://10.0.0.1:80,1", "http://10.0.0.2:80,2"]
policy = [ { allow = { or = [ { email = { is = "a@example.com" } } ] } } ]
`,
  'same.properties': `# the same config as properties
insecure_server=true
address=:8080
${signInLines('properties')}idp_scopes=openid,email
set_response_headers.X-Frame-Options=DENY
routes=[{"from":"https://app.example.com","to":["http://10.0.0.1:80,1","http://10.0.0.2:80,2"],\\
  "policy":[{"allow":{"or":[{"email":{"is":"a@example.com"}}]}}]}]
`,
};

test('YAML, JSON, TOML and properties files give the same Config', () => {
  const configs = Object.entries(SAME_CONFIG).map(([name, text]) => {
    const result = loadConfigFile(write(name, text), {});
    assert.deepEqual(result.problems.map(formatProblem), [], name);
    return JSON.stringify(result.config);
  });
  for (const config of configs) assert.equal(config, configs[0]);
  assert.match(configs[0] ?? '', /"weight":2/);
});

test('.yml and .props are accepted; an unknown extension is a clear error', () => {
  assert.deepEqual(loadConfigFile(write('c.yml', 'insecure_server: true\n'), {}).problems, []);
  assert.deepEqual(loadConfigFile(write('c.props', 'insecure_server=true\n'), {}).problems, []);
  const result = loadConfigFile(write('c.ini', 'insecure_server=true\n'), {});
  assert.match(
    result.problems[0]?.message ?? '',
    /c\.ini: unknown config file extension "\.ini"; use one of \.yaml, \.yml, \.json, \.toml, \.properties, \.props/,
  );
  assert.match(loadConfigFile(write('noext', ''), {}).problems[0]?.message ?? '', /"\(none\)"/);
});

const MALFORMED: [string, string, number][] = [
  ['bad.yaml', 'insecure_server: true\nroutes:\n  - from: https://a\n    to: [\n  - x: 1\n', 5],
  ['dup.yaml', 'address: ":1"\naddress: ":2"\n', 2],
  ['bad.json', '{\n  "insecure_server": true,\n  "address": }\n', 3],
  ['trailing.json', '{\n  "a": 1,\n}\n', 3],
  ['bad.toml', 'insecure_server = true\naddress = \n', 2],
  ['bad.properties', 'insecure_server=true\naddress=\\u12\n', 2],
  ['dup.properties', 'address=:1\naddress=:2\n', 2],
];

for (const [name, text, line] of MALFORMED) {
  test(`malformed ${name}: one error with the file and line, no stack trace`, () => {
    const path = write(name, text);
    const result = loadConfigFile(path, {});
    assert.equal(result.config, undefined);
    assert.equal(result.problems.length, 1);
    const [problem] = result.problems;
    assert.ok(problem?.message.startsWith(`${path}: malformed `), problem?.message);
    assert.equal(problem?.line, line, problem?.message);
    assert.ok(!/\n|at .*\.(ts|js):\d+/.test(problem?.message ?? ''), 'no stack trace or multi-line echo');
  });
}

test('a malformed JSON file does not echo its content (it may hold secrets)', () => {
  const result = loadConfigFile(write('secret.json', '{"shared_secret": "TOP-SECRET-VALUE" x}'), {});
  assert.ok(!formatProblem(result.problems[0] ?? { path: '', message: '' }).includes('TOP-SECRET-VALUE'));
});

test('problems carry the line of their key in YAML, and in TOML and properties', () => {
  const yaml = loadConfigFile(
    write(
      'lines.yaml',
      'insecure_server: true\nroutes:\n  - from: https://a.example.com\n    to: http://a:80\n    policy:\n      - allow:\n          and:\n            - email: a@example.com\n            - nope: 1\n',
    ),
    {},
  );
  assert.deepEqual(yaml.problems.map(formatProblem), [
    'routes[0].policy[0].allow.and[1]: unknown policy criterion: nope (line 9)',
  ]);
  const toml = loadConfigFile(
    write(
      'lines.toml',
      'insecure_server = true\n\n[[routes]]\nfrom = "https://a.example.com"\nto = "http://a"\n\n[[routes]]\nfrom = "https://b.example.com/x"\nto = "http://b"\n',
    ),
    {},
  );
  assert.equal(toml.problems[0]?.path, 'routes[1].from');
  assert.equal(toml.problems[0]?.line, 8);
  const props = loadConfigFile(write('lines.properties', 'insecure_server=true\n\nlog_level=loud\n'), {});
  assert.equal(props.problems[0]?.line, 3);
  const env = loadConfigFile(write('env.yaml', 'insecure_server: true\nlog_level: info\n'), {
    LOG_LEVEL: 'loud',
  });
  assert.equal(env.problems[0]?.path, 'LOG_LEVEL');
  assert.equal(env.problems[0]?.line, undefined, 'env problems have no file line');
});

test('a file over the size limit is refused before it is read', () => {
  const path = join(dir, 'huge.yaml');
  writeFileSync(path, '');
  truncateSync(path, MAX_CONFIG_BYTES + 1);
  assert.match(loadConfigFile(path, {}).problems[0]?.message ?? '', /is \d+ bytes; the limit is 33554432/);
});

test('a missing or unreadable config file is one clear error', () => {
  assert.match(
    loadConfigFile(join(dir, 'missing.yaml'), {}).problems[0]?.message ?? '',
    /cannot read config file: ENOENT \(no such file\)/,
  );
  assert.match(loadConfigFile(dir + '/', {}).problems[0]?.message ?? '', /unknown config file extension/);
  if (process.getuid?.() !== 0) {
    const path = write('locked.yaml', 'a: 1\n');
    chmodSync(path, 0o000);
    assert.match(loadConfigFile(path, {}).problems[0]?.message ?? '', /permission denied/);
  }
});

test('referenced files are listed for the watcher, and read with the same limits', () => {
  const secret = write('shared.txt', `${Buffer.alloc(32, 1).toString('base64')}\n`);
  const result = loadConfigFile(
    write('refs.yaml', `insecure_server: true\nshared_secret_file: ${secret}\n`),
    {},
  );
  assert.deepEqual(result.problems, []);
  assert.ok(result.filesRead.includes(secret));
  const big = join(dir, 'big.pem');
  writeFileSync(big, '');
  truncateSync(big, 9 * 1024 * 1024);
  const tooBig = loadConfigFile(
    write('big.yaml', `insecure_server: true\ncertificate_authority_file: ${big}\n`),
    {},
  );
  assert.match(
    formatProblem(tooBig.problems[0] ?? { path: '', message: '' }),
    /certificate_authority_file: cannot read .*big\.pem: file is \d+ bytes; the limit is/,
  );
});

test('YAML alias bombs are refused', () => {
  const bomb = [
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
    ...'bcdefghij'
      .split('')
      .map((name, index) => `${name}: &${name} [${Array(9).fill(`*${'abcdefghij'[index]}`).join(',')}]`),
  ].join('\n');
  const result = loadConfigFile(write('bomb.yaml', `${bomb}\n`), {});
  assert.equal(result.config, undefined);
  assert.match(result.problems[0]?.message ?? '', /malformed YAML/);
});

test('documents nested deeper than the limit are one error naming the line, in every format, never a crash', () => {
  const deep = (open: string, close: string, count: number): string =>
    open.repeat(count) + close.repeat(count);
  const cases: [name: string, text: string, line: number][] = [];
  for (const count of [1_000, 10_000, 100_000]) {
    cases.push(
      [
        `flow-${count}.yaml`,
        `insecure_server: true\nidp_request_params:\n  a: ${deep('[', ']', count)}\n`,
        3,
      ],
      [
        `map-${count}.yaml`,
        `insecure_server: true\n\nx: ${deep('{a: ', '}', count).replace('{a: }', '{}')}\n`,
        3,
      ],
      [`dash-${count}.yaml`, `insecure_server: true\nx:\n${'- '.repeat(count)}1\n`, 3],
      [`deep-${count}.json`, `{\n  "insecure_server": true,\n  "a": ${deep('[', ']', count)}\n}`, 3],
      [`pretty-${count}.json`, `{\n  "a":\n${'[\n'.repeat(count)}1${']'.repeat(count)}}`, 66],
      [`deep-${count}.toml`, `insecure_server = true\n\n[[routes]]\na = ${deep('[', ']', count)}\n`, 4],
      [
        `inline-${count}.toml`,
        `insecure_server = true\na = ${deep('{ b = ', '}', count).replace('{ b = }', '{}')}\n`,
        2,
      ],
    );
  }
  cases.push(
    ['block.yaml', `${Array.from({ length: 2_000 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')} 1\n`, 65],
    // js-yaml stops at a syntax error (a missed comma, found on line 4); the `yaml` package runs out of stack.
    ['syntax-then-deep.yaml', `a: 1\nb: [\nc: d\n${'['.repeat(100_000)}\n`, 4],
    // Deeper only through aliases, or only through a TOML table header: measured after parsing.
    ['aliases.yaml', `x: &x ${deep('[', ']', 40)}\n\ny: ${'['.repeat(30)}*x${']'.repeat(30)}\n`, 3],
    [
      'header.toml',
      `insecure_server = true\n[${Array.from({ length: 70 }, (_, i) => `k${i}`).join('.')}]\nv = 1\n`,
      2,
    ],
    // Routes written as JSON text in a properties file are held to the same limit.
    ['routes-text.properties', `insecure_server=true\nroutes=${deep('[', ']', 100_000)}\n`, 2],
  );
  for (const [name, text, line] of cases) {
    const result = loadConfigFile(write(name, text), {});
    assert.equal(result.config, undefined, name);
    assert.equal(result.problems.length, 1, name);
    const [problem] = result.problems;
    assert.equal(problem?.line, line, `${name}: ${problem?.message}`);
    if (name !== 'syntax-then-deep.yaml')
      assert.match(
        problem?.message ?? '',
        /malformed \w+: maps and lists are nested more than 64 levels deep/,
        name,
      );
  }
  const exactly64 = JSON.stringify({
    insecure_server: true,
    idp_request_params: JSON.parse(deep('[', ']', 63)),
  });
  assert.doesNotMatch(
    loadConfigFile(write('nested-64.json', exactly64), {}).problems.map(formatProblem).join('\n'),
    /nested more than/,
  );
  const fine = `insecure_server: true\nidp_request_params: ${'{a: '.repeat(20)}1${'}'.repeat(20)}\n`;
  assert.doesNotMatch(
    loadConfigFile(write('nested-20.yaml', fine), {}).problems.map(formatProblem).join('\n'),
    /nested more than/,
  );
});

test('YAML anchors and aliases of a reasonable size still work', () => {
  const result = loadConfigFile(
    write(
      'aliases.yaml',
      [
        'insecure_server: true',
        SIGN_IN_YAML,
        'routes:',
        '  - from: https://a.example.com',
        '    to: http://10.0.0.1:80',
        '    policy: &shared',
        '      - allow:',
        '          or:',
        '            - email: { is: a@example.com }',
        '  - from: https://b.example.com',
        '    to: http://10.0.0.2:80',
        '    policy: *shared',
        '',
      ].join('\n'),
    ),
    {},
  );
  assert.deepEqual(result.problems.map(formatProblem), []);
  assert.deepEqual(
    result.config?.routes.map((route) => route.policy[0]?.path),
    ['routes[0].policy[0].allow', 'routes[1].policy[0].allow'],
  );
});

test('properties: separators, comments, continuations, escapes, dotted map entries', () => {
  const result = parseProperties(
    '# comment\n! also\nkey1 = a\\tb\nkey2:c\nkey3 d\nlong=one,\\\n    two\nuni=\\u00e9\nmap.X-A=1\nmap.X-B=2\nspaced\\ key=v\n',
  );
  assert.ok('document' in result);
  assert.deepEqual(result.document, {
    key1: 'a\tb',
    key2: 'c',
    key3: 'd',
    long: 'one,two',
    uni: 'é',
    map: { 'X-A': '1', 'X-B': '2' },
    'spaced key': 'v',
  });
  assert.equal(result.lines.get('long'), 6);
  assert.equal(result.lines.get('map.X-B'), 10);
  const conflict = parseProperties('map={"a":"b"}\nmap.c=d\n');
  assert.ok('error' in conflict && conflict.line === 2);
});

test('bytes the watcher already read are parsed instead of the file, under the same size limit', () => {
  const path = write('preread.yaml', 'insecure_server: true\naddress: ":1111"\n');
  const bytes = Buffer.from('insecure_server: true\naddress: ":2222"\n');
  const fromBytes = loadConfigFile(path, {}, new Map([[path, bytes]]));
  assert.deepEqual(fromBytes.problems, []);
  assert.equal(fromBytes.config?.address, ':2222', 'the given bytes, not the file');
  const otherFile = loadConfigFile(path, {}, new Map([[`${path}.other`, bytes]]));
  assert.equal(otherFile.config?.address, ':1111', 'bytes of another path are not used');
  const huge = Buffer.alloc(MAX_CONFIG_BYTES + 1, 0x20);
  assert.match(
    loadConfigFile(path, {}, new Map([[path, huge]])).problems[0]?.message ?? '',
    /preread\.yaml: file is \d+ bytes; the limit is \d+/,
  );
});
