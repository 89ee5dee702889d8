// TypeScript declarations for every message of a protobufjs root, in the shape Portcullis writes
// them and protobufjs's `fromObject` reads them (src/proto/codec.ts): snake_case fields, all
// optional; enum values by name; 64-bit integers as numbers or decimal strings; bytes as base64
// text or bytes; repeated fields as arrays; maps as objects; `google.protobuf.Any` as `@type` plus
// the named message's own fields. Not a parser or a codec: protobufjs reads the .proto files and
// does every byte; this only prints types for what it already resolved. Called by gen-proto.mjs.
// Deterministic: messages and enums in full-name order, fields in declaration order.
import protobuf from 'protobufjs';

const TYPE_PREFIX = 'type.googleapis.com/';

/**
 * A key no proto field can have, never set: each message declares it optional with its own full
 * name as the type, so a message of one type is not assignable to another whose fields happen to
 * agree (an UpstreamTlsContext where a DownstreamTlsContext goes), while object literals need not
 * mention it.
 */
const BRAND = '@message';

/** Scalar proto types -> the TypeScript type `fromObject` accepts for them. */
const SCALARS = {
  double: 'number',
  float: 'number',
  int32: 'number',
  uint32: 'number',
  sint32: 'number',
  fixed32: 'number',
  sfixed32: 'number',
  int64: 'number | string',
  uint64: 'number | string',
  sint64: 'number | string',
  fixed64: 'number | string',
  sfixed64: 'number | string',
  bool: 'boolean',
  string: 'string',
  bytes: 'string | Uint8Array',
};

/** Every message and enum under `namespace`, depth first. */
function collect(namespace, messages, enums) {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) messages.push(nested);
    else if (nested instanceof protobuf.Enum) enums.push(nested);
    if (nested.nestedArray !== undefined && nested.nestedArray.length > 0) collect(nested, messages, enums);
  }
}

/** `.envoy.config.cluster.v3.Cluster` -> `envoy.config.cluster.v3.Cluster`. */
const fullName = (reflection) => reflection.fullName.replace(/^\./, '');

/** The declaration's identifier: the full name with `_` for `.`, checked unique by the caller. */
const identifier = (reflection) => fullName(reflection).replace(/\./g, '_');

const anyIdentifier = (message) => `Any_${identifier(message)}`;

/** A property name, quoted when it is not a plain identifier. */
const property = (name) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : JSON.stringify(name));

/** The TypeScript type of one value of `field` (before `repeated` or `map`). */
function valueType(field) {
  const resolved = field.resolvedType;
  if (resolved === null) {
    const scalar = SCALARS[field.type];
    if (scalar === undefined) throw new Error(`unknown scalar ${field.type} in ${field.fullName}`);
    return scalar;
  }
  if (fullName(resolved) === 'google.protobuf.Any') return 'ProtoAny';
  return identifier(resolved);
}

function fieldType(field) {
  const value = valueType(field);
  if (field.map) return `{ readonly [key: string]: ${value} }`;
  if (field.repeated) return value.includes(' ') ? `readonly (${value})[]` : `readonly ${value}[]`;
  return value;
}

function messageDeclaration(message) {
  const name = fullName(message);
  const lines = [
    `/** \`${name}\` */`,
    `interface ${identifier(message)} {`,
    `  readonly '${BRAND}'?: '${name}';`,
  ];
  for (const field of message.fieldsArray) lines.push(`  ${property(field.name)}?: ${fieldType(field)};`);
  lines.push('}');
  lines.push(
    `interface ${anyIdentifier(message)} extends ${identifier(message)} {`,
    `  readonly '@type': '${TYPE_PREFIX}${name}';`,
    '}',
  );
  return lines.join('\n');
}

function enumDeclaration(enumeration) {
  const names = Object.keys(enumeration.values).sort();
  const union = names.length === 0 ? 'never' : names.map((value) => `'${value}'`).join(' | ');
  return `/** \`${fullName(enumeration)}\` */\ntype ${identifier(enumeration)} = ${union};`;
}

const byFullName = (a, b) => (a.fullName < b.fullName ? -1 : a.fullName > b.fullName ? 1 : 0);

/** The text of the declaration file for `root` (resolved), with `header` as its first lines. */
export function protoTypes(root, header) {
  const messages = [];
  const enums = [];
  collect(root, messages, enums);
  messages.sort(byFullName);
  enums.sort(byFullName);
  const seen = new Set();
  for (const reflection of [...messages, ...enums]) {
    for (const id of [identifier(reflection), anyIdentifier(reflection)]) {
      if (seen.has(id)) throw new Error(`two protobuf names map to the TypeScript name ${id}`);
      seen.add(id);
    }
  }
  const entries = (list, value) => list.map((item) => `  '${fullName(item)}': ${value(item)};`);
  return [
    header.trimEnd(),
    '',
    '/**',
    ' * Every message, by its full protobuf name, in the shape protobufjs `fromObject` accepts. Each',
    ` * declares \`${BRAND}\` (never set) as its own name, so messages of different types do not mix.`,
    ' */',
    'export interface ProtoMessages {',
    ...entries(messages, identifier),
    '}',
    '',
    '/** Every enum, by its full protobuf name: the union of its value names. */',
    'export interface ProtoEnums {',
    ...entries(enums, identifier),
    '}',
    '',
    '/** Every message as a `google.protobuf.Any` body: `@type` naming it, then its fields. */',
    'export interface ProtoAnyMessages {',
    ...entries(messages, anyIdentifier),
    '}',
    '',
    '/** A `google.protobuf.Any` in protobufjs JSON form: any message with its `@type`. */',
    'export type ProtoAny = ProtoAnyMessages[keyof ProtoAnyMessages];',
    '',
    ...messages.map(messageDeclaration),
    ...enums.map(enumDeclaration),
    '',
    'export {};',
    '',
  ].join('\n');
}
