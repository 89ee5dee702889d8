import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  responseHeaderSize,
  deltaResourceSize,
  splitBySize,
  varintSize,
} from '../../../../src/xds/server/chunking.js';
import {
  decodeSotwResponse,
  encodeDeltaResponse,
  encodeSotwResponse,
  withNonce,
} from '../../../../src/xds/server/messages.js';
import { CDS } from './helpers.js';

describe('ADS wire helpers', () => {
  it('sizes varints at their boundaries', () => {
    assert.deepEqual(
      [0, 127, 128, 16383, 16384, 2 ** 21 - 1, 2 ** 21].map(varintSize),
      [1, 1, 2, 2, 3, 3, 4],
    );
  });

  for (const valueLength of [0, 100, 200, 20_000, 3_000_000]) {
    it(`computes the exact size a ${valueLength}-byte resource adds to a delta response`, () => {
      const value = new Uint8Array(valueLength).fill(7);
      const resource = { name: 'cluster-é', version: 'abcdef0123456789', resource: { type_url: CDS, value } };
      const empty = {
        system_version_info: '',
        type_url: '',
        resources: [],
        removed_resources: [],
        nonce: '',
      };
      const withOne = encodeDeltaResponse({ ...empty, resources: [resource] }).length;
      const without = encodeDeltaResponse(empty).length;
      assert.equal(deltaResourceSize(resource.name, resource.version, CDS, valueLength), withOne - without);
    });
  }

  it('bounds the header of a delta response from above', () => {
    const version = 'f'.repeat(16);
    const actual = encodeDeltaResponse({
      system_version_info: version,
      type_url: CDS,
      resources: [],
      removed_resources: [],
      nonce: String(Number.MAX_SAFE_INTEGER),
    }).length;
    assert.ok(responseHeaderSize(CDS, version) >= actual);
  });

  it('splits by size in order, giving an oversized item a group of its own', () => {
    const sizes = [40, 40, 30, 120, 10, 90, 10];
    const groups = splitBySize(sizes, 100, (n) => n);
    assert.deepEqual(groups, [[40, 40], [30], [120], [10, 90], [10]]);
    assert.deepEqual(
      splitBySize([], 100, (n: number) => n),
      [],
    );
  });

  it('appends a nonce to a shared SotW body by protobuf merge', () => {
    const body = encodeSotwResponse({
      version_info: 'v1',
      type_url: CDS,
      resources: [{ type_url: CDS, value: new Uint8Array([1, 2, 3]) }],
    });
    const decoded = decodeSotwResponse(withNonce(body, '42'));
    assert.equal(decoded.version_info, 'v1');
    assert.equal(decoded.type_url, CDS);
    assert.equal(decoded.nonce, '42');
    assert.equal(decoded.resources.length, 1);
    assert.deepEqual([...decoded.resources[0]!.value], [1, 2, 3]);
  });
});
