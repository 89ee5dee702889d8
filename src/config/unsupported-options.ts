/**
 * No silent no-ops: options that are parsed and validated but have no effect yet carry a
 * `support` mark in the option tables (option-table*.ts, route-option-table.ts). Setting one to
 * anything but its default is reported here, naming the key (or environment variable) and the
 * issue that will build it: an error where ignoring it would weaken security or lose data, a
 * warning otherwise. The issue that builds an option removes its mark.
 */
import { isDeepStrictEqual } from 'node:util';
import { GLOBAL_OPTIONS, type NotYetSupported, type OptionSpec } from './option-table.js';
import type { ParsedValues } from './parsed-values.js';
import type { Criterion, PolicyRule } from './policy-types.js';
import { readOption } from './read-option.js';
import { ROUTE_OPTIONS, type RouteOptionSpec } from './route-option-table.js';
import type { RouteSettings } from './types.js';
import { Reader } from './value-readers.js';

/**
 * Policy criteria the authorize stage cannot evaluate yet: they are always false, so under `deny`,
 * `not` or `nor` they would let requests through. No issue plans them yet, so using one is an error.
 */
export const UNSUPPORTED_CRITERIA: readonly Criterion['kind'][] = [
  'client_certificate',
  'invalid_client_certificate',
  'device',
];

/**
 * The option tables whose marks are reported: the real ones, or (in tests) tables with marks set,
 * so the reporting is exercised even while no real option carries a mark.
 */
export interface OptionTables {
  readonly global: readonly OptionSpec[];
  readonly route: readonly RouteOptionSpec[];
}

/** The message for a marked option that is set: `is not supported yet (issue <n>); <what happens instead>`. */
export function unsupportedMessage(mark: NotYetSupported): string {
  return `is not supported yet (issue ${mark.issue}); ${mark.effect}`;
}

/**
 * Reports every marked global option set to a value that does not work yet, every marked route
 * key a route sets, and every criterion in UNSUPPORTED_CRITERIA, into `reader` (problems for
 * error marks, warnings for warning marks). Unset options and options at their default are
 * silent, and so is a path that already has a problem (or, for a warning mark, a warning), such
 * as `authorize_service_url` in all-in-one mode: one message per mistake. Marks that translate
 * already refuses (`refusedBy`) are left to it.
 */
export function reportUnsupported(
  reader: Reader,
  values: ParsedValues,
  routes: readonly RouteSettings[],
  tables: OptionTables = { global: GLOBAL_OPTIONS, route: ROUTE_OPTIONS },
): void {
  for (const option of tables.global) {
    const mark = option.support;
    if (mark === undefined || mark.refusedBy !== undefined || !values.explicit(option.key)) continue;
    const value = values.get(option.key);
    if (value === undefined || isDefault(option, value) || mark.works?.(value) === true) continue;
    report(reader, values.path(option.key), mark);
  }
  const routeMarks = tables.route.flatMap(({ key, support }) =>
    support === undefined || support.refusedBy !== undefined ? [] : [{ key, mark: support }],
  );
  for (const route of routes) {
    // A marked route key is a RouteSettings field of the same name, undefined when unset.
    for (const { key, mark } of routeMarks) {
      if ((route as unknown as Record<string, unknown>)[key] !== undefined)
        report(reader, `${route.source_path}.${key}`, mark);
    }
    for (const rule of route.policy) reportCriteria(reader, rule);
  }
}

function report(reader: Reader, path: string, mark: NotYetSupported): void {
  const already = (list: readonly { readonly path: string }[]): boolean =>
    list.some((problem) => problem.path === path);
  if (already(reader.problems) || (mark.severity === 'warning' && already(reader.warnings))) return;
  if (mark.severity === 'error') reader.problem(path, unsupportedMessage(mark));
  else reader.warn(path, unsupportedMessage(mark));
}

/** True when `value` equals the option's default, read the way the option reads any value. */
function isDefault(option: OptionSpec, value: unknown): boolean {
  if (option.default === undefined) return false;
  const typed = readOption(
    new Reader(),
    option,
    { value: option.default, path: option.key, source: 'default', syntax: 'text' },
    () => {
      throw new Error('a default never names a file');
    },
  );
  return isDeepStrictEqual(typed, value);
}

function reportCriteria(reader: Reader, rule: PolicyRule): void {
  for (const criterion of [...rule.and, ...rule.or, ...rule.not, ...rule.nor]) {
    if (!UNSUPPORTED_CRITERIA.includes(criterion.kind)) continue;
    reader.problem(
      criterion.path,
      `the ${criterion.kind} criterion is not supported yet (no issue plans it): it is never true, so under deny, not or nor it would let requests through`,
    );
  }
}
