// The session cookie codec: the handle is read from the Cookie header and the header forwarded
// upstream never carries it, whatever the client wrote around it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitSessionCookie } from '../../../src/session/cookie.js';

const NAME = '_portcullis';

test('reads the session handle and forwards the other cookies unchanged', () => {
  const split = splitSessionCookie('theme=dark; _portcullis=abc.def; lang=en-GB', NAME);
  assert.equal(split.session, 'abc.def');
  assert.equal(split.hadSession, true);
  assert.equal(split.others, 'theme=dark; lang=en-GB');
});

test('no session cookie: nothing read, the header forwarded as it was', () => {
  const split = splitSessionCookie('a=1; b=%20two', NAME);
  assert.equal(split.session, undefined);
  assert.equal(split.hadSession, false);
  assert.equal(split.others, 'a=1; b=%20two');
});

test('only the session cookie: nothing is left to forward', () => {
  assert.deepEqual(splitSessionCookie('_portcullis=x', NAME), {
    session: 'x',
    hadSession: true,
    others: undefined,
  });
});

test('an empty session cookie is no handle, but is still stripped', () => {
  assert.deepEqual(splitSessionCookie('_portcullis=; a=1', NAME), {
    session: undefined,
    hadSession: true,
    others: 'a=1',
  });
});

test('a repeated session cookie is stripped entirely; the first value is the handle', () => {
  const split = splitSessionCookie('_portcullis=first; a=1; _portcullis=second', NAME);
  assert.equal(split.session, 'first');
  assert.equal(split.others, 'a=1');
  assert.ok(!split.others?.includes('second'));
});

test('spaces around names do not hide the session cookie', () => {
  const split = splitSessionCookie('a=1;   _portcullis  =h ;b=2', NAME);
  assert.equal(split.session, 'h');
  assert.equal(split.others, 'a=1; b=2');
});

test('a value RFC 6265 does not allow is forwarded percent-encoded, not dropped', () => {
  const split = splitSessionCookie('q="two words"; _portcullis=h', NAME);
  assert.equal(split.others, `q=${encodeURIComponent('"two words"')}`);
});

test('no header, or an empty one, reads as no cookies', () => {
  for (const header of [undefined, '']) {
    assert.deepEqual(splitSessionCookie(header, NAME), {
      session: undefined,
      hadSession: false,
      others: undefined,
    });
  }
});
