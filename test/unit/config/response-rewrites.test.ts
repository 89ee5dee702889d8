// `routes[i].rewrite_response_headers`: a list of {header, prefix, value}; every mistake is an error
// naming `routes[i].rewrite_response_headers[j].<field>`; routes that do not forward warn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertProblem, base, parse, problems, valid } from './helpers.js';
import {
  MAX_RESPONSE_HEADER_REWRITES,
  MAX_REWRITE_TEXT_BYTES,
} from '../../../src/config/parse-response-rewrites.js';

const KEY = 'routes[0].rewrite_response_headers';
const route = (extra: Record<string, unknown>): Record<string, unknown> =>
  base({ routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080', ...extra }] });
const rules = (...list: unknown[]): Record<string, unknown> => route({ rewrite_response_headers: list });
const LOCATION = { header: 'Location', prefix: 'http://internal:8080/', value: 'https://app.example.com/' };

test('rules are kept in order as written; unset, null or an empty list means none', () => {
  const config = valid(rules(LOCATION, { header: 'Link', prefix: '<http://a', value: '' }));
  assert.deepEqual(config.routes[0]?.rewrite_response_headers, [
    LOCATION,
    { header: 'Link', prefix: '<http://a', value: '' },
  ]);
  for (const raw of [undefined, null, []]) {
    const document = raw === undefined ? route({}) : route({ rewrite_response_headers: raw });
    assert.equal(valid(document).routes[0]?.rewrite_response_headers, undefined, String(raw));
  }
});

test('each field is checked and named', () => {
  assertProblem(problems(rules({ prefix: 'a', value: 'b' })), `${KEY}[0].header`, 'is required');
  assertProblem(problems(rules({ header: 'Location', value: 'b' })), `${KEY}[0].prefix`, 'is required');
  assertProblem(problems(rules({ header: 'Location', prefix: 'a' })), `${KEY}[0].value`, 'is required');
  assertProblem(problems(rules({ ...LOCATION, prefix: '' })), `${KEY}[0].prefix`, 'must not be empty');
  assertProblem(
    problems(rules({ ...LOCATION, header: 'bad name' })),
    `${KEY}[0].header`,
    'not a valid header name',
  );
  assertProblem(problems(rules({ ...LOCATION, header: ':status' })), `${KEY}[0].header`, 'pseudo-header');
  assertProblem(problems(rules({ ...LOCATION, value: 42 })), `${KEY}[0].value`, 'expected a string');
  assertProblem(
    problems(rules({ ...LOCATION, value: 'a\r\nSet-Cookie: x' })),
    `${KEY}[0].value`,
    'CR, LF or NUL',
  );
  assertProblem(problems(rules({ ...LOCATION, prefix: 'a\nb' })), `${KEY}[0].prefix`, 'CR, LF or NUL');
  assertProblem(
    problems(rules({ ...LOCATION, value: 'x'.repeat(MAX_REWRITE_TEXT_BYTES + 1) })),
    `${KEY}[0].value`,
    `the most is ${MAX_REWRITE_TEXT_BYTES}`,
  );
  assertProblem(problems(rules({ ...LOCATION, regex: '.*' })), `${KEY}[0].regex`, 'unknown field');
  assertProblem(problems(rules(LOCATION, 'Location')), `${KEY}[1]`, 'expected a map');
  assertProblem(problems(route({ rewrite_response_headers: { Location: 'x' } })), KEY, 'expected a list');
  assertProblem(
    problems(
      route({
        rewrite_response_headers: Array.from({ length: MAX_RESPONSE_HEADER_REWRITES + 1 }, () => LOCATION),
      }),
    ),
    KEY,
    `at most ${MAX_RESPONSE_HEADER_REWRITES}`,
  );
});

test('a rule an earlier one of the same header always matches first is an error; other headers are independent', () => {
  assertProblem(
    problems(rules({ header: 'location', prefix: 'http://', value: 'a' }, LOCATION)),
    `${KEY}[1].prefix`,
    `never applies: ${KEY}[0] comes first`,
  );
  assertProblem(problems(rules(LOCATION, LOCATION)), `${KEY}[1].prefix`, 'never applies');
  // Longer prefix first is the working order; the same prefix on another header is another rule.
  valid(
    rules(LOCATION, { header: 'Location', prefix: 'http://', value: 'a' }, { ...LOCATION, header: 'Link' }),
  );
});

test('a route that does not forward warns that the rules do not apply', () => {
  for (const extra of [
    { to: undefined, response: { status: 200, body: 'ok' } },
    { from: 'tcp+https://db.example.com:5432', to: 'tcp://10.0.0.1:5432' },
  ]) {
    const result = parse(route({ ...extra, rewrite_response_headers: [LOCATION] }));
    assert.deepEqual(result.problems, [], JSON.stringify(extra));
    assertProblem(result.warnings, KEY, 'does not apply');
  }
});
