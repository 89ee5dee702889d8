import protobuf from 'protobufjs';
import type { ProtoObject } from './codec.js';

/**
 * The fast path of `encodeMessage`: a proto3-JSON-shaped object -> wire bytes in one pass, without
 * protobufjs's `fromObject` (a message instance per object) and op-list writer, which dominated
 * snapshot builds at 10,000 routes. It mirrors protobufjs 7's generated `fromObject` (which fields
 * it keeps and how it converts them) and `encode` (fields by ascending number, present-but-default
 * values written, packed repeated scalars, map entries with key and value, `Any` with `@type`
 * encoded inline). Any value protobufjs would convert rather than take as is, or that needs rarer
 * wire types (groups, sint, fixed, int64 as string or Long, base64 bytes, non-plain objects), makes
 * the fast path give up, and protobufjs encodes the whole message instead; so the output never
 * depends on which path ran (test/unit/xds/codec-fast-path.test.ts compares bytes).
 */

const constants = new WeakSet<object>();
const constantAnyBytes = new WeakMap<object, Uint8Array>();

/** Marks a frozen value as a constant: an `Any` marked so is encoded once and its bytes reused. */
export function registerConstant(value: object): void {
  constants.add(value);
}

/** Thrown inside the fast path when a value needs protobufjs; caught by `fastEncode`. */
class NeedsProtobufjs extends Error {}
const GIVE_UP = new NeedsProtobufjs('value needs protobufjs');

type ScalarKind =
  | 'string'
  | 'bool'
  | 'uint32'
  | 'int32'
  | 'int64'
  | 'uint64'
  | 'double'
  | 'float'
  | 'bytes'
  | 'enum';

interface FieldPlan {
  readonly id: number;
  readonly name: string;
  readonly kind: ScalarKind | 'message' | 'unsupported';
  readonly repeated: boolean;
  readonly packed: boolean;
  readonly map: boolean;
  /** Wire type of one value (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32). */
  readonly wire: number;
  readonly enumValues: Readonly<Record<string, number>> | undefined;
  readonly messageType: protobuf.Type | undefined;
  /** `planOf(messageType)`, filled in on first use (types can be recursive). */
  messagePlan: MessagePlan | undefined;
  /** Bytes of this map field for constant values (see `registerConstant`), filled in on first use. */
  constantBytes: WeakMap<object, Uint8Array> | undefined;
}

interface MessagePlan {
  readonly type: protobuf.Type;
  readonly isAny: boolean;
  /** Writes every set field of a value of this type, in field-number order. */
  readonly writeFields: (value: ProtoObject) => void;
}

const WIRE: Readonly<Record<string, number>> = {
  string: 2,
  bytes: 2,
  bool: 0,
  uint32: 0,
  int32: 0,
  int64: 0,
  uint64: 0,
  enum: 0,
  double: 1,
  float: 5,
  message: 2,
};

const plans = new Map<protobuf.Type, MessagePlan>();

function planOf(type: protobuf.Type): MessagePlan {
  let plan = plans.get(type);
  if (plan === undefined) {
    const fields = [...type.fieldsArray].sort((a, b) => a.id - b.id).map(fieldPlan);
    plan = { type, isAny: type.fullName === '.google.protobuf.Any', writeFields: fieldWriter(fields) };
    plans.set(type, plan);
  }
  return plan;
}

function fieldPlan(field: protobuf.Field): FieldPlan {
  field.resolve();
  const resolved = field.resolvedType;
  const isEnum = resolved instanceof protobuf.Enum;
  const scalar = field.type in WIRE ? (field.type as ScalarKind) : undefined;
  const kind = resolved instanceof protobuf.Type ? 'message' : isEnum ? 'enum' : (scalar ?? 'unsupported');
  const keyOk = !field.map || (field as unknown as protobuf.MapField).keyType === 'string';
  return {
    id: field.id,
    name: field.name,
    kind: keyOk && !field.delimited ? kind : 'unsupported',
    repeated: field.repeated,
    packed: field.repeated && field.packed && kind !== 'message' && kind !== 'string' && kind !== 'bytes',
    map: field.map,
    wire: WIRE[kind] ?? 2,
    enumValues: isEnum ? (resolved as protobuf.Enum).values : undefined,
    messageType: resolved instanceof protobuf.Type ? resolved : undefined,
    messagePlan: undefined,
    constantBytes: undefined,
  };
}

/**
 * Builds a message's field writer: reads each field by its constant name in ascending field number
 * (as protobufjs's generated encoder does; constant names keep property access fast, where a loop
 * over `Object.keys` with computed keys was the slowest part of encoding) and writes it when set.
 * Singular strings and messages, the bulk of Envoy config, are written inline; the rest goes
 * through `writeField`.
 */
function fieldWriter(fields: readonly FieldPlan[]): (value: ProtoObject) => void {
  const body = fields.map((field, index) => {
    const read = `v = m[${JSON.stringify(field.name)}]; if (v !== undefined && v !== null) `;
    const tag = field.id * 8 + field.wire;
    if (field.map || field.repeated) return `${read}writeField(f[${index}], v);`;
    if (field.kind === 'string')
      return `${read}{ if (typeof v !== 'string') throw GIVE_UP; varint(${tag}); writeString(v); }`;
    if (field.kind === 'message') return `${read}{ varint(${tag}); writeNested(f[${index}], v); }`;
    return `${read}writeField(f[${index}], v);`;
  });
  const helpers = { writeField, writeNested, writeString, varint, GIVE_UP };
  const factory = new Function(
    'h',
    'f',
    `const { ${Object.keys(helpers).join(', ')} } = h;\nreturn function (m) { let v;\n${body.join('\n')}\n};`,
  );
  return factory(helpers, fields) as (value: ProtoObject) => void;
}

/** Where `Any`'s protobufjs wrapper sends a `@type` URL (relative lookup from Any), cached per URL. */
const anyTargets = new Map<string, { readonly plan: MessagePlan; readonly typeUrl: string } | null>();
function anyTarget(
  anyType: protobuf.Type,
  url: string,
): { readonly plan: MessagePlan; readonly typeUrl: string } | null {
  let target = anyTargets.get(url);
  if (target === undefined) {
    const found = anyType.lookup(url.substring(url.lastIndexOf('/') + 1));
    let typeUrl = url.charAt(0) === '.' ? url.slice(1) : url;
    if (!typeUrl.includes('/')) typeUrl = `/${typeUrl}`;
    target = found instanceof protobuf.Type ? { plan: planOf(found), typeUrl } : null;
    anyTargets.set(url, target);
  }
  return target;
}

const SCRATCH_BYTES = 64 * 1024;
const MAX_KEPT_SCRATCH_BYTES = 4 * 1024 * 1024;
let buf: Buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
let pos = 0;

function ensure(extra: number): void {
  if (pos + extra <= buf.length) return;
  const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + extra));
  buf.copy(grown, 0, 0, pos);
  buf = grown;
}

/** Writes a non-negative integer up to 2^53 as a varint. */
function varint(value: number): void {
  ensure(10);
  let rest = value;
  while (rest > 0x7f) {
    buf[pos++] = rest % 128 | 0x80;
    rest = Math.floor(rest / 128);
  }
  buf[pos++] = rest;
}

/** Writes a negative integer as protobufjs does for int32/int64: ten-byte two's complement varint. */
function negativeVarint(value: number): void {
  ensure(10);
  let rest = BigInt.asUintN(64, BigInt(value));
  for (let i = 0; i < 9; i++) {
    buf[pos++] = Number(rest & 0x7fn) | 0x80;
    rest >>= 7n;
  }
  buf[pos++] = Number(rest);
}

/** Reserves one byte for a length prefix; returns where the body starts. */
function beginDelimited(): number {
  ensure(1);
  pos += 1;
  return pos;
}

/** Writes the length prefix reserved at `start - 1`, moving the body when it needs more bytes. */
function endDelimited(start: number): void {
  const length = pos - start;
  if (length < 128) {
    buf[start - 1] = length;
    return;
  }
  let extra = 0;
  for (let rest = length; rest > 0x7f; rest = Math.floor(rest / 128)) extra += 1;
  ensure(extra);
  buf.copyWithin(start + extra, start, pos);
  const end = pos + extra;
  pos = start - 1;
  varint(length);
  pos = end;
}

function writeString(value: string): void {
  const length = value.length;
  if (length < 128) {
    ensure(length + 1);
    const start = pos;
    buf[pos++] = length;
    let ascii = true;
    for (let i = 0; i < length; i++) {
      const code = value.charCodeAt(i);
      if (code > 0x7f) {
        ascii = false;
        break;
      }
      buf[pos++] = code;
    }
    if (ascii) return;
    pos = start;
  }
  // As protobufjs's BufferWriter: Buffer.byteLength for the prefix, its own UTF-8 writer for short strings.
  const bytes = Buffer.byteLength(value);
  varint(bytes);
  ensure(bytes);
  if (length < 40) protobuf.util.utf8.write(value, buf, pos);
  else buf.write(value, pos);
  pos += bytes;
}

function isPlainObject(value: unknown): value is ProtoObject {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** A message-typed value (without its tag): length prefix, then its fields. */
function writeNested(field: FieldPlan, value: unknown): void {
  if (!isPlainObject(value)) throw GIVE_UP;
  const plan = (field.messagePlan ??= planOf(field.messageType as protobuf.Type));
  const start = beginDelimited();
  writeMessage(plan, value);
  endDelimited(start);
}

/** Writes one value of `field` (without its tag); throws GIVE_UP where protobufjs would convert. */
function writeValue(field: FieldPlan, value: unknown): void {
  switch (field.kind) {
    case 'string':
      if (typeof value !== 'string') throw GIVE_UP;
      return writeString(value);
    case 'bool':
      if (typeof value !== 'boolean') throw GIVE_UP;
      ensure(1);
      buf[pos++] = value ? 1 : 0;
      return;
    case 'uint32':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 0xffffffff)
        throw GIVE_UP;
      return varint(value);
    case 'int32':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
        throw GIVE_UP;
      return value < 0 ? negativeVarint(value) : varint(value);
    case 'int64':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw GIVE_UP;
      return value < 0 ? negativeVarint(value) : varint(value);
    case 'uint64':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw GIVE_UP;
      return varint(value);
    case 'enum': {
      const number = enumNumber(field, value) as number;
      return number < 0 ? negativeVarint(number) : varint(number);
    }
    case 'double':
      if (typeof value !== 'number') throw GIVE_UP;
      ensure(8);
      protobuf.util.float.writeDoubleLE(value, buf, pos);
      pos += 8;
      return;
    case 'float':
      if (typeof value !== 'number') throw GIVE_UP;
      ensure(4);
      protobuf.util.float.writeFloatLE(value, buf, pos);
      pos += 4;
      return;
    case 'bytes':
      if (!(value instanceof Uint8Array)) throw GIVE_UP;
      varint(value.length);
      ensure(value.length);
      buf.set(value, pos);
      pos += value.length;
      return;
    case 'message':
      return writeNested(field, value);
    case 'unsupported':
      throw GIVE_UP;
  }
}

/** Enum names become numbers; integers pass through; protobufjs drops an unknown name (singular only). */
function enumNumber(field: FieldPlan, value: unknown): number | undefined {
  if (typeof value === 'string') {
    const values = field.enumValues as Readonly<Record<string, number>>;
    if (Object.hasOwn(values, value)) return values[value];
    if (field.repeated || field.map) throw GIVE_UP;
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw GIVE_UP;
  return value;
}

/** One field with its tag(s), as protobufjs's generated encoder writes it. */
function writeField(field: FieldPlan, value: unknown): void {
  const tag = field.id * 8 + field.wire;
  if (field.map) {
    if (!isPlainObject(value)) throw GIVE_UP;
    return constants.has(value) ? writeConstantMap(field, value) : writeMapEntries(field, value);
  }
  if (field.repeated) {
    if (!Array.isArray(value)) throw GIVE_UP;
    if (value.length === 0) return;
    if (field.packed) {
      varint(field.id * 8 + 2);
      const start = beginDelimited();
      for (const item of value) writeValue(field, item);
      return endDelimited(start);
    }
    for (const item of value) {
      varint(tag);
      writeValue(field, item);
    }
    return;
  }
  if (field.kind === 'enum' && enumNumber(field, value) === undefined) return;
  varint(tag);
  writeValue(field, value);
}

/** A constant map (one `typed_extension_protocol_options` shared by every cluster): written once, then copied. */
function writeConstantMap(field: FieldPlan, value: ProtoObject): void {
  const cache = (field.constantBytes ??= new WeakMap());
  const bytes = cache.get(value);
  if (bytes !== undefined) {
    ensure(bytes.length);
    buf.set(bytes, pos);
    pos += bytes.length;
    return;
  }
  const start = pos;
  writeMapEntries(field, value);
  cache.set(value, Uint8Array.prototype.slice.call(buf, start, pos));
}

/** Each entry as protobufjs writes it: a length-delimited message with key (1) and value (2). */
function writeMapEntries(field: FieldPlan, value: ProtoObject): void {
  for (const key of Object.keys(value)) {
    varint(field.id * 8 + 2);
    const entry = beginDelimited();
    varint(10);
    writeString(key);
    varint(16 + field.wire);
    writeValue(field, value[key]);
    endDelimited(entry);
  }
}

function writeMessage(plan: MessagePlan, value: ProtoObject): void {
  if (plan.isAny && value['@type'] !== undefined) return writeAny(plan, value);
  plan.writeFields(value);
}

/** `Any` given as `{'@type': url, ...fields}`: type_url, then the named message encoded inline as `value`. */
function writeAny(anyPlan: MessagePlan, value: ProtoObject): void {
  if (constants.has(value)) {
    let bytes = constantAnyBytes.get(value);
    if (bytes === undefined) {
      const start = pos;
      writeAnyFields(anyPlan, value);
      bytes = Uint8Array.prototype.slice.call(buf, start, pos);
      constantAnyBytes.set(value, bytes);
      return;
    }
    ensure(bytes.length);
    buf.set(bytes, pos);
    pos += bytes.length;
    return;
  }
  writeAnyFields(anyPlan, value);
}

function writeAnyFields(anyPlan: MessagePlan, value: ProtoObject): void {
  const url = value['@type'];
  if (typeof url !== 'string' || url === '') throw GIVE_UP;
  const target = anyTarget(anyPlan.type, url);
  if (target === null) throw GIVE_UP;
  varint(10);
  writeString(target.typeUrl);
  varint(18);
  const start = beginDelimited();
  writeMessage(target.plan, value);
  endDelimited(start);
}

/**
 * Where `fastEncodeSpans` put each value: value i is bytes `starts[i]` to `ends[i]` of
 * `blocks[blockOf[i]]`, or was left to protobufjs where `blockOf[i]` is -1. Parallel typed arrays,
 * not a view object per value: at 10,000 routes a snapshot holds 40,000 resources, and a Buffer view
 * each (96 bytes) was the largest share of what a cold build keeps.
 */
export interface EncodedSpans {
  readonly blocks: Uint8Array[];
  readonly blockOf: Int32Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
}

/**
 * Encodes each value on the fast path into shared blocks of about `SCRATCH_BYTES` each (the
 * values encoded since the last cut). Blocks stay small on purpose: one block per call grew the
 * scratch buffer by doubling to the whole type's size (~5 MB of routes at 10,000 routes) and then
 * copied it into a fresh block of that size, so a large build wrote every byte three times into
 * memory it had just mapped, while a small one reused a scratch buffer that stayed in cache. Cut
 * at this size, both write each byte into the same warm scratch and copy it once.
 */
export function fastEncodeSpans(type: protobuf.Type, values: readonly ProtoObject[]): EncodedSpans {
  const plan = planOf(type);
  const spans: EncodedSpans = {
    blocks: [],
    blockOf: new Int32Array(values.length),
    starts: new Int32Array(values.length),
    ends: new Int32Array(values.length),
  };
  // The values encoded into the scratch buffer since the last cut.
  let first = 0;
  pos = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    const start = pos;
    try {
      if (!isPlainObject(value)) throw GIVE_UP;
      writeMessage(plan, value);
      spans.starts[index] = start;
      spans.ends[index] = pos;
    } catch {
      pos = start;
      spans.blockOf[index] = -1;
    }
    if (pos >= SCRATCH_BYTES || index === values.length - 1) {
      cutBlock(spans, first, index + 1);
      first = index + 1;
      pos = 0;
    }
  }
  if (buf.length > MAX_KEPT_SCRATCH_BYTES) buf = Buffer.allocUnsafe(SCRATCH_BYTES);
  return spans;
}

/**
 * Copies the scratch buffer's first `pos` bytes into a block of their own, which values `from`
 * to `to` (exclusive) that the fast path encoded now point into.
 */
function cutBlock(spans: EncodedSpans, from: number, to: number): void {
  const block = Buffer.allocUnsafeSlow(pos);
  buf.copy(block, 0, 0, pos);
  const at = spans.blocks.length;
  spans.blocks.push(block);
  for (let i = from; i < to; i++) if (spans.blockOf[i] !== -1) spans.blockOf[i] = at;
}

/** Encodes on the fast path; undefined when protobufjs must do it. */
export function fastEncode(type: protobuf.Type, value: ProtoObject): Uint8Array | undefined {
  pos = 0;
  let out: Buffer | undefined;
  try {
    if (isPlainObject(value)) {
      writeMessage(planOf(type), value);
      out = Buffer.allocUnsafe(pos);
      buf.copy(out, 0, 0, pos);
    }
  } catch {
    out = undefined;
  }
  if (buf.length > MAX_KEPT_SCRATCH_BYTES) buf = Buffer.allocUnsafe(SCRATCH_BYTES);
  return out;
}
