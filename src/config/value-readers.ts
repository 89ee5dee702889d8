import type { Problem } from '../shared/errors.js';
import { setOwn } from '../shared/own-property.js';
import { formatDurationMs, MAX_DURATION_MS, parseDurationMs } from './duration.js';

/**
 * How a raw value was written. `typed`: a YAML, JSON or TOML document, where the document already
 * gives each value its type, so a value of another type is a mistake (YAML 1.1's `yes`, a quoted
 * `"true"`, `1.10` meant as text) and is refused, never coerced. `text`: an environment variable,
 * a properties file, a default or a `_file`'s content, where every value is a string to convert
 * (`"true"`, `"30s"`, `"a,b"`).
 */
export type ValueSyntax = 'typed' | 'text';

/**
 * Typed readers for raw config values. Each returns the value or records a problem naming the key
 * path and the expected type, so one pass over a config reports every mistake. Values are read as
 * `typed` unless the caller says they are `text` (see ValueSyntax).
 */
export class Reader {
  readonly problems: Problem[] = [];
  readonly warnings: Problem[] = [];

  problem(path: string, message: string): undefined {
    this.problems.push({ path, message });
    return undefined;
  }

  warn(path: string, message: string): void {
    this.warnings.push({ path, message });
  }

  /** A string; a number or boolean is refused (quoting keeps `1.10` as written, unquoted it is 1.1). */
  string(path: string, value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    return this.problem(path, `expected a string, got ${describe(value)}${quoteHint(value)}`);
  }

  /** A secret string: like `string`, but a message never shows the value, only its type. */
  secret(path: string, value: unknown): string | undefined {
    if (typeof value === 'string') return value;
    const kind = Array.isArray(value)
      ? 'a list'
      : value === null
        ? 'nothing'
        : typeof value === 'object'
          ? 'a map'
          : `a ${typeof value}`;
    const hint = typeof value === 'number' || typeof value === 'boolean' ? '; put it in quotes' : '';
    return this.problem(path, `expected a string, got ${kind} (the value is secret and not shown)${hint}`);
  }

  /**
   * A boolean. Typed documents must write `true` or `false` (not `yes`, `on`, `"true"`); text
   * accepts what Go's strconv.ParseBool accepts (`true`, `false`, `1`, `0`, `t`, `f`, any case).
   */
  bool(path: string, value: unknown, syntax: ValueSyntax = 'typed'): boolean | undefined {
    if (typeof value === 'boolean') return value;
    if (syntax === 'text' && typeof value === 'string') {
      const text = value.trim().toLowerCase();
      if (TRUE_WORDS.includes(text)) return true;
      if (FALSE_WORDS.includes(text)) return false;
    }
    const hint =
      syntax === 'typed' && typeof value === 'string' ? '; write true or false, without quotes' : '';
    return this.problem(path, `expected a boolean (true or false), got ${describe(value)}${hint}`);
  }

  /** A whole number in [min, max]; text may give it as digits, a typed document as a number only. */
  integer(
    path: string,
    value: unknown,
    min: number,
    max: number,
    syntax: ValueSyntax = 'typed',
  ): number | undefined {
    return this.numeric(path, value, { min, max, whole: true }, syntax);
  }

  /** A number in [min, max]; text may give it as a numeral, a typed document as a number only. */
  number(
    path: string,
    value: unknown,
    min: number,
    max: number,
    syntax: ValueSyntax = 'typed',
  ): number | undefined {
    return this.numeric(path, value, { min, max, whole: false }, syntax);
  }

  /** `integer` and `number`: text is converted only when it is a numeral of the wanted kind. */
  private numeric(
    path: string,
    value: unknown,
    range: { readonly min: number; readonly max: number; readonly whole: boolean },
    syntax: ValueSyntax,
  ): number | undefined {
    const numeral = range.whole ? /^-?\d+$/ : /\S/;
    const number =
      syntax === 'text' && typeof value === 'string' && numeral.test(value.trim()) ? Number(value) : value;
    const valid =
      typeof number === 'number' && (range.whole ? Number.isInteger(number) : Number.isFinite(number));
    if (!valid) {
      const expected = range.whole ? 'a whole number' : 'a number';
      return this.problem(path, `expected ${expected}, got ${describe(value)}${unquoteHint(value, syntax)}`);
    }
    if (number < range.min || number > range.max)
      return this.problem(path, `must be between ${range.min} and ${range.max}, got ${number}`);
    return number;
  }

  /**
   * A Go-style duration string (`30s`); bare numbers are rejected because their unit is ambiguous.
   * Negative durations are refused, and so are durations Envoy would refuse (MAX_DURATION_MS).
   */
  duration(path: string, value: unknown, options: { allowZero?: boolean } = {}): number | undefined {
    if (typeof value !== 'string') {
      return this.problem(path, `expected a duration such as "30s" or "1m30s", got ${describe(value)}`);
    }
    const ms = parseDurationMs(value);
    if (ms === undefined)
      return this.problem(path, `"${value}" is not a duration (use e.g. "500ms", "30s", "1m")`);
    if (ms < 0 || (ms === 0 && options.allowZero === false)) {
      return this.problem(
        path,
        `must be ${options.allowZero === false ? 'greater than zero' : 'zero or more'}, got "${value}"`,
      );
    }
    if (!(ms <= MAX_DURATION_MS)) {
      return this.problem(
        path,
        `"${value}" is longer than Envoy accepts; the most is ${formatDurationMs(MAX_DURATION_MS)} (about 292 years)`,
      );
    }
    return ms;
  }

  /** A list of strings; a comma-separated string is split (environment variables, properties files). */
  stringList(path: string, value: unknown): string[] | undefined {
    if (typeof value === 'string')
      return value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
    if (!Array.isArray(value))
      return this.problem(path, `expected a list of strings, got ${describe(value)}`);
    const out: string[] = [];
    value.forEach((item, index) => {
      const text = this.string(`${path}[${index}]`, item);
      if (text !== undefined) out.push(text);
    });
    return out;
  }

  /** A map of string to string; a JSON object string is accepted (environment variables). */
  stringMap(path: string, value: unknown): Record<string, string> | undefined {
    let object = value;
    if (typeof value === 'string') {
      try {
        object = JSON.parse(value);
      } catch {
        return this.problem(path, 'expected a map; in an environment variable write it as a JSON object');
      }
    }
    if (!isPlainObject(object))
      return this.problem(path, `expected a map of strings, got ${describe(value)}`);
    const out: Record<string, string> = {};
    for (const [key, member] of Object.entries(object)) {
      const text = this.string(`${path}.${key}`, member);
      // setOwn: a `__proto__` key (a header or parameter name) stays an entry, not the prototype.
      if (text !== undefined) setOwn(out, key, text);
    }
    return out;
  }

  /**
   * One of a fixed set of names, case-insensitive, with optional aliases (`warning` -> `warn`); the
   * error lists the accepted names and suggests the closest one.
   */
  oneOf<T extends string>(
    path: string,
    value: unknown,
    allowed: readonly T[],
    aliases: Readonly<Record<string, string>> = {},
  ): T | undefined {
    const text = this.string(path, value);
    if (text === undefined) return undefined;
    const wanted = text.trim().toLowerCase();
    const target = aliases[wanted] ?? wanted;
    const found = allowed.find((name) => name.toLowerCase() === target);
    if (found !== undefined) return found;
    const hint = closestKey(wanted, allowed);
    const names = allowed.map((name) => (name === '' ? '"" (empty)' : name)).join(', ');
    return this.problem(
      path,
      `"${text}" is not one of ${names}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
    );
  }
}

/** Go's strconv.ParseBool words (compared lower-cased): what the peer accepts from text. */
const TRUE_WORDS = ['true', 't', '1'];
const FALSE_WORDS = ['false', 'f', '0'];

/** How to keep a number or boolean as text: quote it (unquoted, YAML has already changed `1.10` to 1.1). */
function quoteHint(value: unknown): string {
  return typeof value === 'number' || typeof value === 'boolean'
    ? '; put it in quotes to have it read as text'
    : '';
}

/** How to give a number in a typed document: without quotes. */
function unquoteHint(value: unknown, syntax: ValueSyntax): string {
  return syntax === 'typed' && typeof value === 'string' ? '; write the number without quotes' : '';
}

/** True for `{...}` objects (not arrays, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Short description of a value's type for error messages (`a list`, `the number 3`). */
export function describe(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') return `"${value.length > 60 ? `${value.slice(0, 57)}...` : value}"`;
  return `the ${typeof value} ${String(value)}`;
}

/**
 * Suggests the closest known key for a did-you-mean hint: a case-insensitive match first, then
 * the nearest by edit distance (at most 3, and less than half the key's length).
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameWord = known.find((candidate) => candidate.toLowerCase() === lower);
  if (sameWord !== undefined) return sameWord;
  let best: string | undefined;
  let bestDistance = Math.min(4, Math.ceil(key.length / 2));
  for (const candidate of known) {
    if (candidate === '') continue;
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j] as number;
      row[j] = Math.min(current + 1, (row[j - 1] as number) + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length] as number;
}
