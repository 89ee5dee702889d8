// The large-assertion warning remembers sessions in bounded memory: a flood of distinct sessions
// never grows it past its bound, and a key is first only once until the memory is reset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OncePerKey } from '../../../src/authorize/once-per-key.js';

test('first once per key, and never more than max keys held', () => {
  const once = new OncePerKey(100);
  assert.equal(once.first('a'), true);
  assert.equal(once.first('a'), false);
  for (let i = 0; i < 10_000; i++) {
    once.first(`session-${i}`);
    assert.ok(once.size <= 100, `held ${once.size} keys`);
  }
  assert.equal(once.first('session-9999'), false, 'the latest keys are still remembered');
});
