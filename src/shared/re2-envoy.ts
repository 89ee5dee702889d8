/**
 * What Envoy's RE2 does with an operator regex, decided without Envoy: whether it compiles it at
 * all, an upper bound of its program size (Envoy refuses a program over
 * `re2.max_program_size.error_level`, and a refusal is a NACK of the whole route configuration),
 * and the literal every full match starts with (for the shadowed-route check in translate).
 *
 * Envoy's RE2 reads patterns as Latin-1 (its error for `\x{100}` is "invalid escape sequence"; a
 * `[^/]` costs two byte ranges) and counts the instructions of its flattened byte program; re2js
 * compiles to a rune program, one instruction per character class. So re2js's `programSize()` is
 * no measure of Envoy's (`.{1,255}`: re2js 511, Envoy 768; `\pN`: 3 and 8), and the bound is
 * computed from re2js's program instead, instruction by instruction:
 *
 * 1. RE2's unflattened byte program: a class with k byte ranges in 0-255 is k ranges joined by
 *    k-1 alternations (2k-1 instructions); `.` is two ranges (3), `(?s).` one; a case-folded rune
 *    has at most two Latin-1 members (3); every alternation may cost one more (RE2 wraps a
 *    nullable `x*` as `(x+)?`); plus the fail, match and unanchored `.*?` loop instructions.
 * 2. Flattening emits, per tree of epsilon edges, at most one instruction per alternation or nop
 *    in the tree plus one, and every tree has at least one instruction of its own: the flat size
 *    is at most twice the unflattened size, plus the fail instruction.
 *
 * The bound is loose (about two to three times Envoy's figure) but never below it, which is the
 * direction that matters: a pattern under RE2_MAX_PROGRAM_SIZE here is under it in Envoy.
 * Measured against Envoy 1.40 (`--mode validate` with the warn level at 0, which logs the size).
 */
import { RE2JS } from 're2js';
import { RE2_MAX_PROGRAM_SIZE } from './re2.js';
import { ENVOY_RE2_UNICODE_CLASSES } from './re2-envoy-unicode.js';

/** re2js's instruction codes (Inst in re2js, a port of RE2/J's), for the kinds costed apart. */
const ALT = 1;
const ALT_MATCH = 2;
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY_NOT_NL = 11;
const FOLD_CASE = 1;

/** The slice of re2js's compiled program read here (not in its typings; a unit test pins it). */
interface ProgramView {
  readonly prog: { readonly inst: readonly { op: number; arg: number; runes: ArrayLike<number> }[] };
  readonly prefix: string;
}

/** The verdict on one operator regex: accepted with its size bound, or refused with a reason. */
export type EnvoyRegexCheck =
  | {
      readonly ok: true;
      readonly programSizeBound: number;
      /** The literal every full match starts with ('' when none is certain). */
      readonly literalPrefix: string;
      /** Full match with RE2 semantics in linear time (re2js), as Envoy's `safe_regex` does. */
      readonly fullMatch: (input: string) => boolean;
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Checks `source` the way Envoy's RE2 will: RE2's parser (through re2js), the escapes and
 * characters whose meaning differs in Envoy's Latin-1 RE2, and the program-size bound against
 * RE2_MAX_PROGRAM_SIZE. Never throws; the reason is one line for `validate` to put on the key.
 */
export function checkEnvoyRegex(source: string): EnvoyRegexCheck {
  const latin1 = latin1Problem(source);
  if (latin1 !== undefined) return { ok: false, reason: latin1 };
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: message.replace(/^error parsing regexp:\s*/, '') };
  }
  const view = (compiled as unknown as { re2Input: ProgramView }).re2Input;
  const bound = programSizeBound(view);
  if (bound > RE2_MAX_PROGRAM_SIZE) {
    return {
      ok: false,
      reason: `compiles to an RE2 program of up to ${bound} instructions, over Envoy's limit of ${RE2_MAX_PROGRAM_SIZE}; use fewer or smaller repetitions`,
    };
  }
  return {
    ok: true,
    programSizeBound: bound,
    literalPrefix: view.prefix,
    fullMatch: (input) => compiled.matches(input),
  };
}

/**
 * What re2js takes and Envoy's RE2 refuses or reads otherwise. Envoy's RE2 reads the pattern as
 * Latin-1 bytes: `\x{...}` above FF is an error there, and a non-ASCII character stands for its
 * UTF-8 bytes one by one, so it would not mean what it says (request paths are ASCII;
 * percent-encoding is matched as written). re2js knows Unicode classes Envoy's RE2 does not.
 */
function latin1Problem(source: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[^\x00-\x7f]/.test(source))
    return "has a non-ASCII character, which Envoy's RE2 reads as separate Latin-1 bytes; match the percent-encoded form instead";
  for (const found of source.matchAll(/(\\*)\\x\{\s*([0-9A-Fa-f]+)\s*\}/g)) {
    const escaped = (found[1] ?? '').length % 2 === 1;
    if (!escaped && Number.parseInt(found[2] ?? '0', 16) > 0xff)
      return `has ${found[0].slice((found[1] ?? '').length)}, above \\x{FF}, which Envoy's RE2 (Latin-1) refuses`;
  }
  for (const found of source.matchAll(/(\\*)\\[pP](?:\{\^?([^}]*)\}|([A-Za-z]))/g)) {
    const escaped = (found[1] ?? '').length % 2 === 1;
    const name = found[2] ?? found[3] ?? '';
    if (!escaped && !ENVOY_RE2_UNICODE_CLASSES.has(name))
      return `has the Unicode class ${found[0].slice((found[1] ?? '').length)}, which Envoy's RE2 does not know`;
  }
  return undefined;
}

/** Step 1 and 2 of the module comment: the bound on Envoy's flattened program size. */
function programSizeBound(view: ProgramView): number {
  let unflattened = 1 + 2; // Envoy's fail instruction and its unanchored `.*?` loop.
  for (const inst of view.prog.inst) unflattened += instructionCost(inst);
  return 2 * unflattened + 1;
}

function instructionCost(inst: { op: number; arg: number; runes: ArrayLike<number> }): number {
  switch (inst.op) {
    case RUNE:
    case RUNE1: {
      const ranges = (inst.arg & FOLD_CASE) !== 0 ? 2 : inst.op === RUNE1 ? 1 : latin1Ranges(inst.runes);
      return Math.max(1, 2 * ranges - 1);
    }
    case RUNE_ANY_NOT_NL:
      return 3;
    case ALT:
    case ALT_MATCH:
      return 2; // RE2 may add one instruction to an alternation (a nullable star)
    default:
      return 1;
  }
}

/** How many of a class's ranges (pairs lo, hi) reach into 0-255, where Envoy's RE2 lives. */
function latin1Ranges(runes: ArrayLike<number>): number {
  let count = 0;
  for (let index = 0; index < runes.length; index += 2) if ((runes[index] ?? 0x100) <= 0xff) count += 1;
  return count;
}
