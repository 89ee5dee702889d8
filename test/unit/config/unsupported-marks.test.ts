// The not-supported machinery must keep working while no real option carries a mark: these
// tests give it tables with marks set (a warning on a global option, an error on one with a
// default, an error on a route key) and check what it reports, and that a malformed mark fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GLOBAL_OPTIONS, type NotYetSupported, type OptionSpec } from '../../../src/config/option-table.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import { ParsedValues } from '../../../src/config/parsed-values.js';
import { readOption } from '../../../src/config/read-option.js';
import { ROUTE_OPTIONS, type RouteOptionSpec } from '../../../src/config/route-option-table.js';
import { collectRawValues } from '../../../src/config/sources.js';
import { reportUnsupported, type OptionTables } from '../../../src/config/unsupported-options.js';
import { Reader } from '../../../src/config/value-readers.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { wellFormedMarkProblems } from './option-support-marks.js';

const WARN: NotYetSupported = {
  status: 'not-yet',
  issue: 26,
  severity: 'warning',
  effect: 'nothing listens on it',
};
const ERROR: NotYetSupported = {
  status: 'not-yet',
  issue: 28,
  severity: 'error',
  effect: 'the level stays at info',
};
const ROUTE_ERROR: NotYetSupported = {
  status: 'not-yet',
  issue: 27,
  severity: 'error',
  effect: 'the name is dropped',
};

const TABLES: OptionTables = {
  global: GLOBAL_OPTIONS.map((option): OptionSpec => {
    if (option.key === 'metrics_address') return { ...option, support: WARN };
    if (option.key === 'log_level') return { ...option, support: ERROR };
    return option;
  }),
  route: ROUTE_OPTIONS.map(
    (option): RouteOptionSpec => (option.key === 'name' ? { ...option, support: ROUTE_ERROR } : option),
  ),
};

/** What reportUnsupported says of `document` and `env` with the synthetic tables, as lines. */
function reported(
  document: Record<string, unknown>,
  env: Record<string, string> = {},
): { problems: string[]; warnings: string[] } {
  const parsed = parseConfig({ document, env, readText: () => '' });
  assert.ok(parsed.config, JSON.stringify(parsed.problems));
  const reader = new Reader();
  const raws = collectRawValues(new Reader(), document, env);
  const values = new ParsedValues(raws);
  for (const option of GLOBAL_OPTIONS) {
    const raw = raws.get(option.key);
    if (raw !== undefined)
      values.set(
        option.key,
        readOption(new Reader(), option, raw, () => ''),
      );
  }
  reportUnsupported(reader, values, parsed.config.routes, TABLES);
  return { problems: reader.problems.map(formatProblem), warnings: reader.warnings.map(formatProblem) };
}

const BASE = {
  insecure_server: true,
  address: ':8080',
  routes: [
    {
      from: 'https://app.example.com',
      to: 'http://10.0.0.1:8080',
      allow_public_unauthenticated_access: true,
    },
  ],
};

test('a marked option set in the file or the environment is reported with its issue and effect', () => {
  assert.deepEqual(reported({ ...BASE, metrics_address: ':9090' }).warnings, [
    'metrics_address: is not supported yet (issue 26); nothing listens on it',
  ]);
  assert.deepEqual(reported(BASE, { METRICS_ADDRESS: ':9090' }).warnings, [
    'METRICS_ADDRESS: is not supported yet (issue 26); nothing listens on it',
  ]);
  assert.deepEqual(reported({ ...BASE, log_level: 'debug' }).problems, [
    'log_level: is not supported yet (issue 28); the level stays at info',
  ]);
});

test('a marked option unset or at its default is silent; a marked route key is reported at its route', () => {
  assert.deepEqual(reported(BASE), { problems: [], warnings: [] });
  assert.deepEqual(reported({ ...BASE, log_level: 'info' }), { problems: [], warnings: [] });
  const named = { ...BASE, routes: [{ ...BASE.routes[0], name: 'app' }] };
  assert.deepEqual(reported(named).problems, [
    'routes[0].name: is not supported yet (issue 27); the name is dropped',
  ]);
});

test('a malformed mark is caught: an unknown issue, an effect ending in a full stop, a marked _file option', () => {
  assert.deepEqual(wellFormedMarkProblems([...TABLES.global, ...TABLES.route]), []);
  const bad = [
    { ...GLOBAL_OPTIONS[0], key: 'a', support: { ...WARN, issue: 99 } },
    { ...GLOBAL_OPTIONS[0], key: 'b', support: { ...WARN, effect: 'it does nothing at all.' } },
  ] as unknown as OptionSpec[];
  assert.equal(wellFormedMarkProblems(bad).length, 2);
  const fileOption = GLOBAL_OPTIONS.find((option) => option.kind.type === 'file');
  assert.ok(fileOption);
  assert.equal(wellFormedMarkProblems([{ ...fileOption, support: WARN }]).length, 1);
});
