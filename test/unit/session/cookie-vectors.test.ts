// The shared Cookie vectors against the authorizer's codec: the session cookie it reads, and that
// each vector's `forwarded` (what Envoy's credential strip must leave, checked through the real
// Envoy in test/integration/credential-strip.test.ts) holds exactly the other cookies by the same
// library's reading: no session cookie, nothing else lost.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCookie } from 'cookie';
import { splitSessionCookie } from '../../../src/session/cookie.js';
import { readCredentials } from '../../../src/authorize/request-credentials.js';
import { COOKIE_VECTORS, SESSION_COOKIE_NAME } from '../../support/cookie-vectors.js';

const read = (header: string | undefined): Record<string, string | undefined> => ({
  ...parseCookie(header ?? '', { decode: (value) => value }),
});

for (const vector of COOKIE_VECTORS) {
  test(`cookie vector: ${vector.name}`, () => {
    const split = splitSessionCookie(vector.sent.join('; '), SESSION_COOKIE_NAME);
    assert.equal(split.session, vector.session, 'the handle the authorizer reads');
    assert.equal(split.hadSession, vector.hadSession, 'whether the authorizer sees a session cookie');
    assert.equal(
      splitSessionCookie(vector.forwarded, SESSION_COOKIE_NAME).hadSession,
      false,
      'no session cookie is forwarded',
    );
    const others = read(vector.sent.join('; '));
    delete others[SESSION_COOKIE_NAME];
    assert.deepEqual(read(vector.forwarded), others, 'every other cookie is forwarded');
    assert.deepEqual(read(split.others), others, "the authorizer's own rewrite");
    assert.equal(
      readCredentials({ cookie: vector.sent.join('; ') }, SESSION_COOKIE_NAME).conflicting,
      vector.conflicting === true,
      'two different session cookies are a conflict',
    );
  });
}

test('the vectors cover what the strip must agree on', () => {
  const all = COOKIE_VECTORS.flatMap((vector) => vector.sent).join('\n');
  for (const [what, pattern] of [
    ['a space before =', /_portcullis =/],
    ['a tab', /\t/],
    ['; without a space', /;_portcullis/],
    ['a repeat', /_portcullis=[^;]*;.*_portcullis=/],
    ['an empty value', /_portcullis=;/],
    ['a quoted value', /_portcullis="/],
    ['names differing in case', /_Portcullis=/],
  ] as const)
    assert.match(all, pattern, what);
  assert.ok(
    COOKIE_VECTORS.some((vector) => vector.sent.length > 1),
    'several Cookie fields',
  );
});
