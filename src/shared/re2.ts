/**
 * Operator regexes (route `regex`, `:authority` patterns) with RE2 semantics, the engine Envoy
 * uses. JavaScript's `RegExp` backtracks: `/(a+)+` against a 40-character path blocks the event
 * loop for hours, so no operator pattern ever runs on request data through it. re2js is a pure
 * JavaScript port of RE2 (linear-time matching, RE2's syntax and repetition limits), garbage
 * collected like any object, so a reload that recompiles every pattern leaks nothing.
 */
import { RE2JS } from 're2js';

/** A compiled operator pattern: full-match only, as Envoy's `safe_regex` matchers do. */
export interface Re2Pattern {
  /** The pattern as written. */
  readonly source: string;
  /** True when the whole of `input` matches (Envoy's `safe_regex` semantics). */
  fullMatch(input: string): boolean;
  /** RE2's estimate of the compiled program's size (what Envoy's program-size limits compare). */
  readonly programSize: number;
}

/** The outcome of compiling: the pattern, or RE2's reason for refusing it (no stack, no input). */
export type Re2Compiled =
  | { readonly ok: true; readonly pattern: Re2Pattern }
  | { readonly ok: false; readonly reason: string };

/**
 * Compiles `source` with RE2's parser. Never throws: a pattern RE2 refuses (lookaround,
 * backreferences, a repetition over 1000, bad syntax) comes back with RE2's reason, for
 * `validate` to report against the key that holds it.
 */
export function compileRe2(source: string): Re2Compiled {
  try {
    const compiled = RE2JS.compile(source);
    return {
      ok: true,
      pattern: {
        source,
        programSize: compiled.programSize(),
        fullMatch: (input: string) => compiled.matches(input),
      },
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: message.replace(/^error parsing regexp:\s*/, '') };
  }
}

/**
 * The largest RE2 program Envoy compiles for an operator regex: the bootstrap's
 * `re2.max_program_size.error_level` runtime key (src/envoy/bootstrap.ts, envoy/sidecar.yaml) and
 * the bound `validate` checks its estimate against (re2-envoy.ts), one number so that what
 * `validate` accepts Envoy accepts. Big enough for any path pattern (`a{1000}` is about 1,000),
 * small enough that one route cannot make Envoy build a huge automaton per request.
 */
export const RE2_MAX_PROGRAM_SIZE = 100_000;
