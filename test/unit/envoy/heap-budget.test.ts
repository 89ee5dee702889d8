import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envoyHeapBudget, MIN_ENVOY_HEAP_BYTES } from '../../../src/envoy/heap-budget.js';

const GiB = 1024 * 1024 * 1024;

test("Envoy's heap budget is three quarters of the memory we may use, never below 1 GiB", () => {
  assert.equal(envoyHeapBudget({ totalBytes: 24 * GiB, cgroupLimitBytes: undefined }), 18 * GiB);
  assert.equal(
    envoyHeapBudget({ totalBytes: 24 * GiB, cgroupLimitBytes: 4 * GiB }),
    3 * GiB,
    'a cgroup limit wins',
  );
  assert.equal(
    envoyHeapBudget({ totalBytes: 2 * GiB, cgroupLimitBytes: 8 * GiB }),
    1.5 * GiB,
    'RAM below the limit wins',
  );
  assert.equal(envoyHeapBudget({ totalBytes: 1 * GiB, cgroupLimitBytes: undefined }), MIN_ENVOY_HEAP_BYTES);
  assert.ok(envoyHeapBudget() >= MIN_ENVOY_HEAP_BYTES, 'this machine');
});
