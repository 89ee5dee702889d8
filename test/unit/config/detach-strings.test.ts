import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detachStrings } from '../../../src/config/detach-strings.js';

test('detachStrings keeps every value and the structure, in place', () => {
  const long = 'https://a-rather-long-host.example.test/with/a/path';
  const text = `prefix ${long} suffix`;
  const document = {
    routes: [{ from: text.slice(7, 7 + long.length), to: ['http://10.0.0.1:8080,3', 'short'], n: 3 }],
    nested: { deep: [[text.slice(0, 20)]], flag: true, none: null },
  };
  const expected = structuredClone(document);
  const routes = document.routes;
  assert.equal(detachStrings(document), document, 'the same object comes back');
  assert.equal(document.routes, routes, 'edited in place');
  assert.deepEqual(document, expected);
  assert.equal(detachStrings('a standalone string that is long'), 'a standalone string that is long');
  assert.equal(detachStrings(''), '');
});
