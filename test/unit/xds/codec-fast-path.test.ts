import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import type { IR } from '../../../src/ir/types.js';
import {
  constantMessage,
  encodeMessage,
  encodeMessageFastPathOnly,
  encodeMessageReference,
  encodeMessages,
  typed,
  type ProtoObject,
} from '../../../src/xds/codec/codec.js';
import { RESOURCE_TYPES } from '../../../src/xds/codec/type-urls.js';
import { compile } from '../../../src/xds/compile/compile.js';
import { caseNames, GOLDEN_DIR } from '../../support/golden.js';
import { withBuiltMessages } from '../../../src/xds/compile/lazy-resource.js';

/**
 * `encodeMessage` writes common shapes itself instead of protobufjs's `fromObject` + `encode`; the
 * promise is the same bytes, always. Golden files compare decoded output, which would not show a
 * different field order or length encoding, so this compares bytes with protobufjs directly.
 */
function assertSameBytes(
  messageName: string,
  value: ProtoObject,
  what = messageName,
  path: 'fast' | 'protobufjs' = 'fast',
): void {
  const fast = encodeMessageFastPathOnly(messageName, value);
  assert.equal(fast === undefined ? 'protobufjs' : 'fast', path, `${what}: expected the ${path} path`);
  const reference = Buffer.from(encodeMessageReference(messageName, value));
  assert.deepEqual(
    Buffer.from(encodeMessage(messageName, value)),
    reference,
    `${what}: encodeMessage differs from protobufjs`,
  );
  const [batched] = encodeMessages(messageName, [value]);
  assert.deepEqual(
    Buffer.from(batched as Uint8Array),
    reference,
    `${what}: encodeMessages differs from protobufjs`,
  );
}

function goldenIrs(): { name: string; ir: IR }[] {
  const configDir = join(GOLDEN_DIR, 'config-to-ir');
  const xdsDir = join(GOLDEN_DIR, 'ir-to-xds');
  return [
    ...caseNames(configDir).map((name) => ({
      name,
      ir: parse(readFileSync(join(configDir, `${name}.out.yaml`), 'utf8')) as IR,
    })),
    ...caseNames(xdsDir).map((name) => ({
      name,
      ir: parse(readFileSync(join(xdsDir, `${name}.in.yaml`), 'utf8')) as IR,
    })),
  ];
}

describe('fast encoder matches protobufjs byte for byte', () => {
  it('on every resource of every golden case, one by one and batched', () => {
    for (const { name, ir } of goldenIrs()) {
      const compiled = withBuiltMessages(compile(ir));
      for (const type of RESOURCE_TYPES) {
        for (const resource of compiled[type])
          assertSameBytes(type, resource.message, `${name} ${type} ${resource.name}`);
        const batched = encodeMessages(
          type,
          compiled[type].map((resource) => resource.message),
        );
        compiled[type].forEach((resource, index) =>
          assert.deepEqual(
            Buffer.from(batched[index] as Uint8Array),
            Buffer.from(encodeMessageReference(type, resource.message)),
          ),
        );
      }
    }
  });

  it('on scalar edge values: negative and large integers, floats, bytes, wrappers', () => {
    assertSameBytes('google.protobuf.Int32Value', { value: -5 });
    assertSameBytes('google.protobuf.Int32Value', { value: -2147483648 });
    assertSameBytes('google.protobuf.Int32Value', { value: 0 });
    assertSameBytes('google.protobuf.Int64Value', { value: -1 });
    assertSameBytes('google.protobuf.Int64Value', { value: Number.MAX_SAFE_INTEGER });
    assertSameBytes('google.protobuf.UInt32Value', { value: 4294967295 });
    assertSameBytes('google.protobuf.UInt64Value', { value: 2 ** 40 + 3 });
    assertSameBytes('google.protobuf.DoubleValue', { value: -0 });
    assertSameBytes('google.protobuf.DoubleValue', { value: 0.1 });
    assertSameBytes('google.protobuf.FloatValue', { value: 1.1 });
    assertSameBytes('google.protobuf.BoolValue', { value: false });
    assertSameBytes('google.protobuf.BytesValue', { value: new Uint8Array([0, 1, 255]) });
    assertSameBytes('google.protobuf.BytesValue', { value: new Uint8Array(300).fill(7) });
    assertSameBytes('google.protobuf.StringValue', { value: '' });
  });

  it('on strings: non-ASCII short and long, and lengths needing two-byte prefixes', () => {
    for (const value of [
      'é',
      'grüße aus köln',
      '日本語のテキスト'.repeat(3),
      'ü'.repeat(200),
      'a'.repeat(127),
      'a'.repeat(128),
      'x'.repeat(20_000),
    ]) {
      assertSameBytes('google.protobuf.StringValue', { value });
    }
  });

  it('on messages, repeated and packed fields, maps, enums and nested Any', () => {
    assertSameBytes('envoy.config.route.v3.RetryPolicy', {
      retry_on: '5xx',
      num_retries: { value: 3 },
      retriable_status_codes: [503, 504, 70000],
      retriable_request_headers: [{ name: 'x-retry', present_match: true }],
    });
    assertSameBytes('envoy.config.core.v3.HealthStatusSet', { statuses: ['HEALTHY', 'DEGRADED', 3] });
    assertSameBytes('google.protobuf.Struct', {
      fields: {
        a: { string_value: 'x' },
        b: { number_value: 2.5 },
        c: { list_value: { values: [{ bool_value: true }] } },
      },
    });
    assertSameBytes('envoy.config.cluster.v3.Cluster', {
      name: 'c'.repeat(150),
      type: 'STRICT_DNS',
      lb_policy: 'NOT_A_POLICY', // protobufjs drops an unknown enum name; so must the fast path
      connect_timeout: { seconds: 1, nanos: 500_000_000 },
      unknown_key: 'ignored',
      load_assignment: null,
      dns_lookup_family: undefined,
      typed_extension_protocol_options: {
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': typed(
          'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
          {
            explicit_http_config: { http2_protocol_options: { max_concurrent_streams: { value: 5 } } },
          },
        ),
      },
      metadata: { filter_metadata: { portcullis: { fields: { big: { string_value: 'v'.repeat(400) } } } } },
    });
  });

  it('on values only protobufjs converts (the fast path must hand them over, not guess)', () => {
    const handOver = (messageName: string, value: ProtoObject): void =>
      assertSameBytes(messageName, value, messageName, 'protobufjs');
    handOver('google.protobuf.UInt32Value', { value: '42' });
    handOver('google.protobuf.UInt32Value', { value: 2.7 });
    handOver('google.protobuf.Int64Value', { value: '-9007199254740993' });
    handOver('google.protobuf.BytesValue', { value: 'AAEC' });
    handOver('google.protobuf.StringValue', { value: 12 });
    handOver('google.protobuf.BoolValue', { value: 1 });
    handOver('envoy.config.core.v3.HealthStatusSet', { statuses: ['NOT_A_STATUS'] });
    handOver('envoy.config.cluster.v3.Cluster', {
      name: 'x',
      typed_extension_protocol_options: { k: { '@type': 'type.googleapis.com/no.such.Type' } },
    });
  });

  it('encodes many values across several shared blocks, hand-overs included, as one by one', () => {
    // ~1 KB each, so the batch spans many blocks; values protobufjs must convert sit first, last
    // and in between, and a run of them fills the end of a block.
    const values: ProtoObject[] = [];
    for (let i = 0; i < 400; i++) {
      const handOver = i === 0 || i === 399 || i % 37 === 0 || (i >= 130 && i < 134);
      values.push({
        name: `cluster-${i}`,
        type: 'EDS',
        ...(handOver ? { per_connection_buffer_limit_bytes: { value: String(1000 + i) } } : {}),
        alt_stat_name: 'x'.repeat(1000 + i),
      });
    }
    const batched = encodeMessages('envoy.config.cluster.v3.Cluster', values);
    assert.equal(batched.length, values.length);
    const blocks = new Set(batched.map((bytes) => (bytes as Uint8Array).buffer));
    assert.ok(blocks.size > 3, `expected several blocks, got ${blocks.size}`);
    values.forEach((value, i) => {
      assert.deepEqual(
        Buffer.from(batched[i] as Uint8Array),
        Buffer.from(encodeMessageReference('envoy.config.cluster.v3.Cluster', value)),
        `value ${i}`,
      );
    });
  });

  it('reuses the bytes of a constant typed config, and the result does not change', () => {
    const options = constantMessage({
      key: typed('envoy.extensions.upstreams.http.v3.HttpProtocolOptions', {
        explicit_http_config: { http_protocol_options: {} },
      }),
    });
    assert.ok(Object.isFrozen(options.key));
    const cluster = (name: string): ProtoObject => ({
      name,
      type: 'EDS',
      typed_extension_protocol_options: options,
    });
    for (const name of ['a', 'b', 'a']) assertSameBytes('envoy.config.cluster.v3.Cluster', cluster(name));
  });
});
