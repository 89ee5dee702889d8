// Canonical JSON keeps a `__proto__` key (JSON.parse and YAML give it as an own key): dropping it
// would make two documents that differ there hash the same, so a change there would not rebuild.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson } from '../../../src/shared/canonical-json.js';

test('a __proto__ key is serialized like any other, sorted', () => {
  const value = JSON.parse('{"b": 1, "__proto__": {"x": "1"}, "a": {"__proto__": "v"}}') as unknown;
  assert.equal(canonicalJson(value), '{"__proto__":{"x":"1"},"a":{"__proto__":"v"},"b":1}');
  assert.notEqual(
    canonicalJson(JSON.parse('{"__proto__": "v1"}')),
    canonicalJson(JSON.parse('{"__proto__": "v2"}')),
  );
});
