import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackIp } from '../../../src/shared/loopback.js';

test('isLoopbackIp accepts only loopback IP literals', () => {
  for (const yes of ['127.0.0.1', '127.255.0.9', '::1', '[::1]', '0:0:0:0:0:0:0:1'])
    assert.equal(isLoopbackIp(yes), true, yes);
  for (const no of ['128.0.0.1', '::ffff:10.0.0.1', '127.example.com', 'localhost', '[::2]', ''])
    assert.equal(isLoopbackIp(no), false, no);
});
