// Outlier detection compiles each key config accepts into the shape Envoy's descriptor declares for
// it (Duration, plain bool, or UInt32Value/BoolValue wrapper), and protobufjs encodes it to the
// value given: compile keeps its own list of plain bool fields, and this holds it to the descriptor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OUTLIER_FIELDS } from '../../../src/config/parse-outlier-detection.js';
import { compileOutlierDetection } from '../../../src/xds/compile/outlier-detection.js';
import { decodeMessage, encodeMessage } from '../../../src/proto/codec.js';
import { messageType } from '../../../src/proto/proto-root.js';

const OUTLIER = 'envoy.config.cluster.v3.OutlierDetection';

for (const [key, kind] of Object.entries(OUTLIER_FIELDS)) {
  // false and 0 too: a wrapper written where a plain field is expected would encode as true.
  const values = kind === 'bool' ? [false, true] : kind === 'duration' ? [1500] : [0, 7];
  test(`outlier_detection.${key} compiles to the shape Envoy declares`, () => {
    const field = messageType(OUTLIER).fields[key];
    assert.ok(field, `${key} is a field of ${OUTLIER}`);
    const wire = field.resolvedType?.fullName ?? field.type;
    for (const value of values) {
      const settings = kind === 'duration' ? { [`${key}_ms`]: value } : { [key]: value };
      const compiled = compileOutlierDetection(settings) as Record<string, unknown>;
      const decoded = decodeMessage(OUTLIER, encodeMessage(OUTLIER, compiled));
      if (kind === 'duration') {
        assert.equal(wire, '.google.protobuf.Duration');
        assert.deepEqual(compiled[key], { seconds: 1, nanos: 500_000_000 });
        assert.deepEqual(decoded[key], { seconds: '1', nanos: 500_000_000 });
      } else if (wire === 'bool') {
        assert.equal(compiled[key], value);
        assert.equal(decoded[key] ?? false, value);
      } else {
        assert.equal(wire, kind === 'bool' ? '.google.protobuf.BoolValue' : '.google.protobuf.UInt32Value');
        assert.deepEqual(compiled[key], { value });
        assert.equal(
          (decoded[key] as { value?: unknown } | undefined)?.value ?? (kind === 'bool' ? false : 0),
          value,
        );
      }
    }
  });
}

test('the table has a plain bool, a BoolValue, a UInt32Value and a Duration (each branch above runs)', () => {
  const wires = new Set(
    Object.keys(OUTLIER_FIELDS).map((key) => {
      const field = messageType(OUTLIER).fields[key];
      return field?.resolvedType?.fullName ?? field?.type;
    }),
  );
  for (const wire of [
    'bool',
    '.google.protobuf.BoolValue',
    '.google.protobuf.UInt32Value',
    '.google.protobuf.Duration',
  ])
    assert.ok(wires.has(wire), wire);
});
