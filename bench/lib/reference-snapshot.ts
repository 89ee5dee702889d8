import { createHash } from 'node:crypto';
import { encodeMessageReference } from '../../src/xds/codec/codec.js';
import { RESOURCE_TYPES } from '../../src/xds/codec/type-urls.js';
import type { BuiltResources } from '../../src/xds/compile/lazy-resource.js';

/**
 * The snapshot build as it was before the performance work: protobufjs `fromObject` + `encode` per
 * resource and a `createHash` object per version. Measured in the same run as the current
 * `buildSnapshot`, so the speed-up is a ratio on the same machine at the same moment, not a number
 * remembered from another day. Returns the total encoded bytes, to keep the work observable.
 */
export function referenceSnapshotBytes(compiled: BuiltResources): number {
  let total = 0;
  for (const type of RESOURCE_TYPES) {
    const versionInput: string[] = [];
    for (const { name, message } of compiled[type]) {
      const bytes = encodeMessageReference(type, message);
      const version = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
      versionInput.push(`${name}=${version}`);
      total += bytes.length;
    }
    createHash('sha256').update(versionInput.join('\n')).digest('hex');
  }
  return total;
}
