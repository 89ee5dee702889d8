// No silent no-ops: every option of the global and route tables either has a reader outside
// src/config or a not-supported mark, and a marked option set to anything but its default is
// reported (an error or a warning naming the key and the issue) while its default stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import ts from 'typescript';
import { runValidate } from '../../../src/cmd/compile-command.js';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { envName, GLOBAL_OPTIONS, type OptionSpec } from '../../../src/config/option-table.js';
import { ROUTE_OPTIONS } from '../../../src/config/route-option-table.js';
import { formatProblem, type Problem } from '../../../src/shared/errors.js';
import { SIGN_IN, SIGN_IN_YAML } from '../../support/sign-in-config.js';
import { CERT_PEM, parse, SECRET_32 } from './helpers.js';
import { wellFormedMarkProblems } from './option-support-marks.js';

const ROOT = new URL('../../..', import.meta.url).pathname;

/** Every .ts file under src/, as absolute paths. */
function sourceFiles(): string[] {
  return (function walk(dir: string): string[] {
    return readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return walk(path);
      return path.endsWith('.ts') ? [path] : [];
    });
  })(join(ROOT, 'src'));
}

/**
 * Files in src/config that are not parsing but a view of the Config for code outside it: their
 * reads count when code outside src/config imports them (the test checks that it does).
 * identity-provider.ts turns the `idp_*` settings into the clients sign-in uses.
 */
const CONFIG_VIEWS = ['src/config/identity-provider.ts'];

/**
 * Fields of `Config` and `RouteSettings` (src/config/types.ts) that code outside src/config (or a
 * CONFIG_VIEWS file) reads, as `Config.<field>`: property accesses and destructuring, resolved by
 * the TypeScript checker so that a same-named field of another type (`listener.address`) does not
 * count.
 */
function configFieldReaders(): Set<string> {
  const files = sourceFiles();
  const tsconfig = ts.readConfigFile(join(ROOT, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  const { options } = ts.parseJsonConfigFileContent(tsconfig.config, ts.sys, ROOT);
  const program = ts.createProgram(files, options);
  const checker = program.getTypeChecker();
  const typesFile = join(ROOT, 'src/config/types.ts');
  const found = new Set<string>();
  const record = (symbol: ts.Symbol | undefined): void => {
    for (const declaration of symbol?.declarations ?? []) {
      const owner = declaration.parent;
      if (ts.isInterfaceDeclaration(owner) && declaration.getSourceFile().fileName === typesFile) {
        found.add(`${owner.name.text}.${symbol?.name ?? ''}`);
      }
    }
  };
  for (const source of program.getSourceFiles()) {
    const path = relative(ROOT, source.fileName);
    if (!path.startsWith('src/') || (path.startsWith('src/config/') && !CONFIG_VIEWS.includes(path)))
      continue;
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node)) record(checker.getSymbolAtLocation(node.name));
      if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const name = (node.propertyName ?? node.name).getText(source);
        record(checker.getTypeAtLocation(node.parent).getProperty(name));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/**
 * Global options whose value lands in a Config field of another name, read only inside config
 * parsing: each is consumed through the field named here.
 */
const FOLDED_INTO: Readonly<Record<string, string>> = {
  // The inline and file forms of the listener certificate are merged into `certificates`.
  certificate: 'certificates',
  certificate_key: 'certificates',
  certificate_file: 'certificates',
  certificate_key_file: 'certificates',
  // The deprecated spelling of `routes`; its routes come first in `routes`.
  policy: 'routes',
};

/**
 * Route options that only relax a validation rule, so their reader is the check itself, inside
 * src/config: `allow_restricted_upstream` lets check-upstream-targets.ts accept a restricted `to`.
 */
const VALIDATION_ONLY_ROUTE_OPTIONS: readonly string[] = ['allow_restricted_upstream'];

/** The Config fields an option's value may land in: its key, or the key with a unit or form suffix. */
function fieldsOf(key: string): string[] {
  const base = key.replace(/_file$/, '');
  return [base, `${base}_ms`, `${base}_pem`, `${base}_href`, `${base}_host`];
}

/** The global option whose Config field carries `option` (a `_file` option fills its target's). */
function carrier(option: OptionSpec): OptionSpec {
  if (option.kind.type !== 'file') return option;
  const target = option.kind.of;
  return GLOBAL_OPTIONS.find((candidate) => candidate.key === target) ?? option;
}

test('the config views are used outside src/config', () => {
  for (const view of CONFIG_VIEWS) {
    const specifier = `/config/${view.replace(/^src\/config\//, '').replace(/\.ts$/, '.js')}'`;
    const users = sourceFiles().filter(
      (path) =>
        !relative(ROOT, path).startsWith('src/config/') && readFileSync(path, 'utf8').includes(specifier),
    );
    assert.ok(users.length > 0, `${view} is imported by nothing outside src/config`);
  }
});

test('every option has a reader outside src/config or a not-supported mark', () => {
  const readers = configFieldReaders();
  assert.ok(readers.has('Config.routes') && readers.has('RouteSettings.to'), 'the scan finds readers');
  const silent: string[] = [];
  for (const option of GLOBAL_OPTIONS) {
    const target = carrier(option);
    if (target.support !== undefined) continue;
    const fields = FOLDED_INTO[target.key] !== undefined ? [FOLDED_INTO[target.key]] : fieldsOf(target.key);
    if (!fields.some((field) => readers.has(`Config.${field}`))) silent.push(option.key);
  }
  for (const option of ROUTE_OPTIONS) {
    if (option.support !== undefined || VALIDATION_ONLY_ROUTE_OPTIONS.includes(option.key)) continue;
    if (!fieldsOf(option.key).some((field) => readers.has(`RouteSettings.${field}`)))
      silent.push(`routes[].${option.key}`);
  }
  assert.deepEqual(
    silent,
    [],
    'these options are parsed but nothing outside src/config reads them: give each a `support` mark (not supported yet, with its issue) or make it work',
  );
});

test('marks are well formed: an issue that builds it, a severity, and what happens instead', () => {
  // The same check runs over tables with marks set in unsupported-marks.test.ts.
  assert.deepEqual(wellFormedMarkProblems([...GLOBAL_OPTIONS, ...ROUTE_OPTIONS]), []);
});

/** Sign-in and split-safe secrets: every marked option can be set on top. */
const CONTEXT: Record<string, unknown> = {
  insecure_server: true,
  address: ':8080',
  routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080' }],
  ...SIGN_IN,
  shared_secret: SECRET_32,
  cookie_secret: SECRET_32,
};

/** A value that does not work yet for every marked global option, with the context it needs. */
const SAMPLES: Readonly<Record<string, { value: unknown; context?: Record<string, unknown> }>> = {};

/** The form of a value in an environment variable: lists comma-separated, maps as JSON. */
function envText(value: unknown): string {
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

function notSupportedAt(list: readonly Problem[], path: string): Problem | undefined {
  return list.find((problem) => problem.path === path && /is not supported yet/.test(problem.message));
}

function allNotSupported(result: { problems: readonly Problem[]; warnings: readonly Problem[] }): string[] {
  return [...result.problems, ...result.warnings]
    .filter((problem) => /is not supported yet/.test(problem.message))
    .map(formatProblem);
}

const MARKED = GLOBAL_OPTIONS.filter((option) => option.support !== undefined);

test('every marked global option has a sample value for the tests below', () => {
  assert.deepEqual(
    MARKED.map((option) => option.key).filter((key) => SAMPLES[key] === undefined),
    [],
  );
});

for (const option of MARKED) {
  const mark = option.support;
  const sample = SAMPLES[option.key];
  if (mark === undefined || sample === undefined) continue;
  test(`${option.key} set (file and env) is reported as ${mark.severity} naming issue ${mark.issue}`, () => {
    const document = { ...CONTEXT, ...sample.context };
    const cases = [
      { path: option.key, result: parse({ ...document, [option.key]: sample.value }) },
      {
        path: envName(option.key),
        result: parse(document, { [envName(option.key)]: envText(sample.value) }),
      },
    ];
    for (const { path, result } of cases) {
      const list = mark.severity === 'error' ? result.problems : result.warnings;
      const found = notSupportedAt(list, path);
      assert.ok(found, `${path}: expected a ${mark.severity}, got ${JSON.stringify(result)}`);
      assert.equal(found.message, `is not supported yet (issue ${mark.issue}); ${mark.effect}`);
      if (mark.severity === 'error') assert.equal(result.config, undefined, 'an error refuses the config');
    }
  });
}

test('a marked option unset, or set to its default in the file or the environment, is silent', () => {
  assert.deepEqual(allNotSupported(parse({ insecure_server: true, routes: [] })), []);
  for (const option of MARKED.filter((candidate) => candidate.default !== undefined)) {
    const value = option.default as string;
    const fromFile = parse({ ...CONTEXT, [option.key]: value });
    assert.equal(notSupportedAt(fromFile.warnings, option.key), undefined, `${option.key}: ${value}`);
    assert.equal(notSupportedAt(fromFile.problems, option.key), undefined, `${option.key}: ${value}`);
    const fromEnv = parse({ insecure_server: true }, { [envName(option.key)]: value });
    assert.deepEqual(allNotSupported(fromEnv), [], `${envName(option.key)}=${value}`);
  }
});

test('issue 25 options work and are silent: split services, service URLs, Redis', () => {
  for (const services of ['all', 'all,proxy', 'authenticate,authorize,proxy,databroker', 'proxy,all']) {
    const result = parse({ insecure_server: true, services });
    assert.deepEqual(allNotSupported(result), [], services);
    assert.deepEqual(result.config?.services, ['authenticate', 'authorize', 'proxy', 'databroker'], services);
  }
  const split = parse({
    ...CONTEXT,
    services: 'proxy,databroker',
    authorize_service_url: 'http://127.0.0.1:5443',
    authenticate_internal_service_url: 'http://127.0.0.1:5444',
    grpc_client_timeout: '30s',
    databroker_storage_type: 'redis',
    databroker_storage_connection_string: 'redis://a:6379',
  });
  assert.deepEqual([...split.problems, ...split.warnings].map(formatProblem), []);
  assert.deepEqual(split.config?.services, ['proxy', 'databroker']);
});

test('a path that already has a problem gets no second message', () => {
  const result = parse({ insecure_server: true, metrics_address: 'nope' });
  assert.deepEqual(
    result.problems.map((problem) => problem.path),
    ['metrics_address'],
  );
  assert.match(result.problems[0]?.message ?? '', /is not an address/);
  assert.deepEqual(result.warnings, [], 'no "not supported yet" on top of the bad value');
});

test('policy criteria that cannot be evaluated yet are refused wherever they appear', () => {
  const route = (policy: unknown): unknown => ({
    insecure_server: true,
    ...SIGN_IN,
    routes: [{ from: 'https://a.example.com', to: 'http://10.0.0.1:80', policy }],
  });
  const deny = parse(
    route({ allow: { or: [{ accept: true }] }, deny: { or: [{ device: { approved: true } }] } }),
  );
  assert.match(
    formatProblem(deny.problems[0] as Problem),
    /^routes\[0\]\.policy.*deny\.or\[0\]: the device criterion is not supported yet/,
  );
  assert.equal(deny.config, undefined);
  const allow = parse(route({ allow: { not: [{ invalid_client_certificate: true }] } }));
  assert.ok(allow.problems.some((problem) => /invalid_client_certificate criterion/.test(problem.message)));
  const fine = parse(route({ allow: { or: [{ email: 'a@example.com' }] } }));
  assert.deepEqual(fine.problems, []);
});

const dir = mkdtempSync(join(tmpdir(), 'portcullis-support-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

test('loadConfigFile reports warnings with their line, a _file form by its own key; validate prints them and passes', async () => {
  // certificate_authority is ignored beside tls_derive: a warning on the key that set it.
  const ca = write('ca.pem', CERT_PEM);
  const head = `insecure_server: true\naddress: ":8080"\nshared_secret: ${SECRET_32}\ntls_derive: portcullis.internal\n`;
  const cases = [
    {
      path: write(
        'ca-inline.yaml',
        `${head}certificate_authority: ${Buffer.from(CERT_PEM).toString('base64')}\n`,
      ),
      key: 'certificate_authority',
    },
    {
      path: write('ca-file.yaml', `${head}certificate_authority_file: ${ca}\n`),
      key: 'certificate_authority_file',
    },
  ];
  for (const { path, key } of cases) {
    const loaded = loadConfigFile(path, {});
    assert.ok(loaded.config, key);
    assert.deepEqual(loaded.warnings.map(formatProblem), [
      `${key}: is ignored with tls_derive set: internal connections trust only the CA derived from shared_secret; unset certificate_authority or tls_derive (line 5)`,
    ]);
    const err = new PassThrough();
    assert.equal(await runValidate(path, new PassThrough(), err), 0, key);
    assert.match(String(err.read()), new RegExp(`warning: ${key}: is ignored with tls_derive set`));
  }
});

test('TCP routes validate (issue 27); marks that translate refuses still fail validate', async () => {
  const tcp = write(
    'tcp.yaml',
    `insecure_server: true\n${SIGN_IN_YAML}routes:\n  - from: tcp+https://db.example.com:5432\n    to: tcp://10.0.0.5:5432\n`,
  );
  assert.deepEqual(allNotSupported(loadConfigFile(tcp, {})), []);
  const err = new PassThrough();
  assert.equal(await runValidate(tcp, new PassThrough(), err), 0, String(err.read()));
  // Redirect and response routes are being built (issue 26): checked while their mark remains.
  const answering: Record<string, string> = {
    redirect: '{ https_redirect: true }',
    response: '{ status: 403, body: no }',
  };
  const refused = ROUTE_OPTIONS.filter((option) => option.support?.refusedBy === 'translate');
  assert.deepEqual(
    refused.map((option) => option.key).filter((key) => key !== 'from' && answering[key] === undefined),
    [],
    'every route mark that translate refuses has a sample here',
  );
  for (const { key } of refused.filter((option) => option.key !== 'from')) {
    const value = answering[key] ?? '';
    const path = write(
      `${key}.yaml`,
      `insecure_server: true\n${SIGN_IN_YAML}routes:\n  - from: https://a.example.com\n    ${key}: ${value}\n`,
    );
    const out = new PassThrough();
    assert.equal(await runValidate(path, new PassThrough(), out), 1, key);
    assert.match(String(out.read()), new RegExp(`routes\\[0\\]: ${key} routes .*not served`));
  }
});
