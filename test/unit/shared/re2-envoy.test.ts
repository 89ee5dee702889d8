// The Envoy-side RE2 check: the program-size bound never under Envoy's own figure, Latin-1 escapes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkEnvoyRegex } from '../../../src/shared/re2-envoy.js';
import { RE2_MAX_PROGRAM_SIZE } from '../../../src/shared/re2.js';

/**
 * Program sizes Envoy 1.40 reported for these patterns (`--mode validate` with
 * `re2.max_program_size.warn_level: 0`, which logs "RE2 program size of N"). re2js's own
 * programSize() is under several of them (`.{1,255}`: 511; `[^/]{1,100}`: 201; `\pN`: 3).
 */
const ENVOY_SIZES: readonly (readonly [string, number])[] = [
  ['/a', 6],
  ['/api/v[0-9]+/users/[^/]+', 22],
  ['a{1000}', 1004],
  ['[^/]{1,100}', 303],
  ['.{1,255}', 768],
  ['([^/]+/){10}', 64],
  ['(/[a-z0-9]+){1,20}', 143],
  ['((a|b)(c|d)){1,50}', 453],
  ['(?i)/admin', 10],
  ['\\pN', 8],
  ['\\p{Latin}', 10],
  ['[[:word:]]', 7],
  ['x{1000}'.repeat(80), 80004],
];

test("the program-size bound is never below Envoy's RE2 program size", () => {
  for (const [pattern, envoy] of ENVOY_SIZES) {
    const checked = checkEnvoyRegex(pattern);
    if (envoy > RE2_MAX_PROGRAM_SIZE / 2) {
      // Envoy takes it under our limit; the bound, twice Envoy's figure at least, refuses it.
      assert.equal(checked.ok, false, pattern.slice(0, 20));
      continue;
    }
    assert.ok(checked.ok, pattern);
    assert.ok(
      checked.programSizeBound >= envoy,
      `${pattern}: bound ${checked.programSizeBound} < Envoy ${envoy}`,
    );
    assert.ok(
      checked.programSizeBound <= 5 * envoy,
      `${pattern}: bound ${checked.programSizeBound} is loose`,
    );
  }
});

test('what Envoy refuses is refused with a one-line reason', () => {
  const reason = (pattern: string): string => {
    const checked = checkEnvoyRegex(pattern);
    assert.equal(checked.ok, false, pattern.slice(0, 40));
    return checked.ok ? '' : checked.reason;
  };
  assert.match(reason('/(a{1000}){1000}'), /invalid repeat count/);
  assert.match(reason('/(?<=a)b'), /named capture|Perl/);
  assert.match(reason('/\\x{100}'), /above \\x\{FF\}/);
  assert.match(reason('/[\\x{41}-\\x{2000}]'), /above \\x\{FF\}/);
  assert.match(reason('/\u00e9'), /non-ASCII/);
  // Unicode classes re2js knows and Envoy 1.40's RE2 refuses ("invalid character class range").
  assert.match(reason('/\\p{Cn}'), /Unicode class \\p\{Cn\}/);
  assert.match(reason('/[\\p{Emoji}x]'), /Unicode class/);
  for (const known of ['/\\pL', '/\\p{Greek}', '/\\P{^Latin}', '/\\p{Any}', '/\\\\p{Cn}'])
    assert.equal(checkEnvoyRegex(known).ok, true, known);
  assert.match(reason('[^/]{1000}'.repeat(40)), new RegExp(`over Envoy's limit of ${RE2_MAX_PROGRAM_SIZE}`));
  assert.equal(checkEnvoyRegex('/\\\\x{100}').ok, true, 'an escaped backslash makes x{100} a repetition');
});

test('the literal prefix is what every full match starts with', () => {
  const prefix = (pattern: string): string => {
    const checked = checkEnvoyRegex(pattern);
    return checked.ok ? checked.literalPrefix : 'refused';
  };
  assert.equal(prefix('/admin/.*'), '/admin/');
  assert.equal(prefix('/ad+'), '/ad');
  assert.equal(prefix('(?i)/admin'), '/');
  assert.equal(prefix('/a|/b'), '/');
  assert.equal(prefix('^/admin'), '');
});
