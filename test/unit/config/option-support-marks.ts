import type { OptionSpec } from '../../../src/config/option-table.js';
import type { RouteOptionSpec } from '../../../src/config/route-option-table.js';

/** The issues that may build a not-yet-supported option. */
const KNOWN_ISSUES = [24, 25, 26, 27, 28];

/**
 * What is wrong with the marks of `options`, one line per fault (empty when all are well formed):
 * a mark names a known issue and says what happens instead (no full stop: the message goes on);
 * a `_file` option carries none (it is reported through the option it fills); a global option's
 * mark is reported by parsing, never left to translate (`refusedBy`).
 */
export function wellFormedMarkProblems(options: readonly (OptionSpec | RouteOptionSpec)[]): string[] {
  const problems: string[] = [];
  for (const option of options) {
    const mark = option.support;
    if (mark === undefined) continue;
    if (!KNOWN_ISSUES.includes(mark.issue)) problems.push(`${option.key}: issue ${mark.issue} is not known`);
    if (mark.effect.length <= 10 || mark.effect.endsWith('.')) problems.push(`${option.key}: effect`);
    if ('kind' in option && option.kind.type === 'file')
      problems.push(`${option.key}: a _file option is marked`);
    if ('kind' in option && 'group' in option && mark.refusedBy !== undefined)
      problems.push(`${option.key}: parsing reports global options`);
  }
  return problems;
}
