// The hand-written CheckRequest reader and CheckResponse writer against the protobufjs reference
// codec (check-codec.ts), over thousands of seeded random inputs: same AuthorizeRequest, same bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCheckRequest, encodeCheckResponse } from '../../../../src/authorize/ext-authz/check-codec.js';
import { readCheckRequest } from '../../../../src/authorize/ext-authz/check-request-reader.js';
import { writeCheckResponse } from '../../../../src/authorize/ext-authz/check-response-writer.js';
import { ProtoWireError } from '../../../../src/authorize/ext-authz/proto-wire-reader.js';
import { messageType } from '../../../../src/xds/codec/proto-root.js';
import { Random, randomCheckRequestObject, randomDecision } from './codec-generators.js';

const CASES = 3000;
const checkRequest = messageType('envoy.service.auth.v3.CheckRequest');

function encodeRequest(object: Record<string, unknown>): Buffer {
  return Buffer.from(checkRequest.encode(checkRequest.fromObject(object)).finish());
}

/** Unknown fields of every wire type, to be spliced in at the top level. */
function unknownFields(random: Random): Buffer {
  const pick = random.int(5);
  if (pick === 0) return Buffer.from([0xf8, 0x01, 0x96, 0x01]); // field 31 varint 150
  if (pick === 1) return Buffer.from([0xf9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]); // field 31 fixed64
  if (pick === 2) return Buffer.from([0xfd, 0x01, 1, 2, 3, 4]); // field 31 fixed32
  if (pick === 3) return Buffer.from([0xfa, 0x01, 3, 0x61, 0x62, 0x63]); // field 31 bytes
  return Buffer.from([0xfb, 0x01, 0x08, 0x01, 0xfc, 0x01]); // field 31 group with a varint inside
}

test('readCheckRequest returns what the protobufjs reference returns, for random requests', () => {
  const random = new Random(20261122);
  for (let index = 0; index < CASES; index++) {
    let bytes = encodeRequest(randomCheckRequestObject(random));
    if (random.chance(0.2)) bytes = Buffer.concat([unknownFields(random), bytes]);
    if (random.chance(0.2)) bytes = Buffer.concat([bytes, encodeRequest(randomCheckRequestObject(random))]);
    const view = random.chance(0.5) ? new Uint8Array(bytes) : bytes;
    assert.deepStrictEqual(
      { ...readCheckRequest(view) },
      { ...decodeCheckRequest(view) },
      `case ${index}: ${bytes.toString('hex')}`,
    );
  }
});

test('writeCheckResponse is byte-identical to the protobufjs reference, for random decisions', () => {
  const random = new Random(7);
  for (let index = 0; index < CASES; index++) {
    const decision = randomDecision(random);
    const expected = Buffer.from(encodeCheckResponse(decision));
    const actual = writeCheckResponse(decision);
    assert.ok(actual.equals(expected), `case ${index}: ${JSON.stringify(decision).slice(0, 300)}`);
  }
});

test('truncated and malformed requests throw ProtoWireError, never return garbage', () => {
  const random = new Random(99);
  let threw = 0;
  for (let index = 0; index < 500; index++) {
    const bytes = encodeRequest(randomCheckRequestObject(random));
    if (bytes.length < 2) continue;
    const cut = bytes.subarray(0, 1 + random.int(bytes.length - 1));
    try {
      readCheckRequest(cut);
    } catch (err) {
      assert.ok(err instanceof ProtoWireError, String(err));
      threw++;
    }
  }
  assert.ok(threw > 100, `most truncations are detected (${threw})`);
  for (const bad of [
    [0x0a, 0x05, 0x01], // length past the end
    [0x00], // field number 0
    [0x0e], // wire type 6
    [0x0c], // end group without a start
    [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], // 11-byte varint
    [0x0a, 0x04, 0x22, 0x05, 0x12, 0x00], // a nested length running past its parent
  ]) {
    assert.throws(() => readCheckRequest(Buffer.from(bad)), ProtoWireError, Buffer.from(bad).toString('hex'));
  }
});
