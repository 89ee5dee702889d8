import { CONTEXT_ROUTE_ID, decodeRouteContext } from '../../contract/authz.js';
import type { AuthorizeRequest } from '../decision.js';
import { asBuffer, ProtoWireReader, WIRE_LENGTH_DELIMITED } from './proto-wire-reader.js';

// Field numbers from envoy/service/auth/v3/{external_auth,attribute_context}.proto and
// envoy/config/core/v3/address.proto (proto/envoy.json).
const CHECK_REQUEST_ATTRIBUTES = 1;
const ATTRIBUTES_SOURCE = 1;
const ATTRIBUTES_REQUEST = 4;
const ATTRIBUTES_CONTEXT_EXTENSIONS = 10;
const PEER_ADDRESS = 1;
const ADDRESS_SOCKET_ADDRESS = 1;
const SOCKET_ADDRESS_ADDRESS = 2;
const REQUEST_HTTP = 2;
const HTTP_ID = 1;
const HTTP_METHOD = 2;
const HTTP_HEADERS = 3;
const HTTP_PATH = 4;
const HTTP_HOST = 5;
const HTTP_SCHEME = 6;
const HTTP_QUERY = 7;
const MAP_KEY = 1;
const MAP_VALUE = 2;

/** The HttpRequest fields authorization reads, as the wire carries them. */
interface HttpFields {
  id: string;
  method: string;
  headers: Record<string, string>;
  path: string;
  host: string;
  scheme: string;
  query: string;
}

/** The AttributeContext parts authorization reads. */
interface Attributes {
  http: HttpFields | undefined;
  routeIdValue: string | undefined;
  sourceIp: string;
}

/**
 * Reads a CheckRequest's wire bytes into the AuthorizeRequest that `decodeCheckRequest` (the
 * protobufjs reference in `check-codec.ts`) returns for the same bytes, touching only the fields
 * authorization needs and skipping the rest without decoding them. It follows protobufjs where
 * the protobuf rules leave room: a repeated singular message field replaces the earlier one, map
 * entries accumulate with the last value per key winning, a field with an unexpected wire type is
 * skipped as unknown. Truncated or malformed bytes throw (`ProtoWireError`): the caller answers
 * gRPC INVALID_ARGUMENT.
 */
export function readCheckRequest(bytes: Uint8Array): AuthorizeRequest {
  const buffer = asBuffer(bytes);
  const reader = new ProtoWireReader(buffer, 0, buffer.length);
  let attributes: Attributes | undefined;
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    if (tag === ((CHECK_REQUEST_ATTRIBUTES << 3) | WIRE_LENGTH_DELIMITED)) {
      attributes = readAttributes(reader);
    } else {
      reader.skip(tag & 7);
    }
  }
  return toAuthorizeRequest(attributes);
}

function toAuthorizeRequest(attributes: Attributes | undefined): AuthorizeRequest {
  const http = attributes?.http;
  const rawPath = http?.path ?? '';
  const cut = rawPath.search(/[?#]/);
  const headers = http?.headers ?? {};
  const routeIdValue = attributes?.routeIdValue;
  return {
    routeId:
      routeIdValue === undefined ? undefined : decodeRouteContext({ [CONTEXT_ROUTE_ID]: routeIdValue }),
    requestId: headers['x-request-id'] ?? http?.id ?? '',
    method: http?.method ?? '',
    scheme: (http?.scheme ?? '').toLowerCase(),
    host: http?.host ?? '',
    path: cut < 0 ? rawPath : rawPath.slice(0, cut),
    query:
      http?.query || (cut >= 0 && rawPath[cut] === '?' ? (rawPath.slice(cut + 1).split('#')[0] ?? '') : ''),
    headers,
    sourceIp: attributes?.sourceIp ?? '',
  };
}

const fieldTag = (field: number): number => (field << 3) | WIRE_LENGTH_DELIMITED;
const STRING_FIELD = {
  source: fieldTag(ATTRIBUTES_SOURCE),
  request: fieldTag(ATTRIBUTES_REQUEST),
  contextExtensions: fieldTag(ATTRIBUTES_CONTEXT_EXTENSIONS),
  peerAddress: fieldTag(PEER_ADDRESS),
  socketAddress: fieldTag(ADDRESS_SOCKET_ADDRESS),
  address: fieldTag(SOCKET_ADDRESS_ADDRESS),
  http: fieldTag(REQUEST_HTTP),
  id: fieldTag(HTTP_ID),
  method: fieldTag(HTTP_METHOD),
  headers: fieldTag(HTTP_HEADERS),
  path: fieldTag(HTTP_PATH),
  host: fieldTag(HTTP_HOST),
  scheme: fieldTag(HTTP_SCHEME),
  query: fieldTag(HTTP_QUERY),
  key: fieldTag(MAP_KEY),
  value: fieldTag(MAP_VALUE),
} as const;

function readAttributes(reader: ProtoWireReader): Attributes {
  const outer = reader.enter();
  const attributes: Attributes = { http: undefined, routeIdValue: undefined, sourceIp: '' };
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    if (tag === STRING_FIELD.source) {
      attributes.sourceIp = readNested(reader, PEER_ADDRESS_PATH);
    } else if (tag === STRING_FIELD.request) {
      attributes.http = readRequest(reader);
    } else if (tag === STRING_FIELD.contextExtensions) {
      const [key, value] = readStringPair(reader);
      if (key === CONTEXT_ROUTE_ID) attributes.routeIdValue = value;
    } else {
      reader.skip(tag & 7);
    }
  }
  reader.leave(outer);
  return attributes;
}

/** Peer.address -> Address.socket_address -> SocketAddress.address. */
const PEER_ADDRESS_PATH = [STRING_FIELD.peerAddress, STRING_FIELD.socketAddress, STRING_FIELD.address];

/**
 * Follows a chain of message fields (the last one a string), where each occurrence of a field
 * replaces the earlier one; an absent link gives ''.
 */
function readNested(reader: ProtoWireReader, path: readonly number[], depth = 0): string {
  const outer = reader.enter();
  const wanted = path[depth] as number;
  const last = depth === path.length - 1;
  let value = '';
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    if (tag !== wanted) reader.skip(tag & 7);
    else if (last) value = reader.string();
    else value = readNested(reader, path, depth + 1);
  }
  reader.leave(outer);
  return value;
}

function readRequest(reader: ProtoWireReader): HttpFields | undefined {
  const outer = reader.enter();
  let http: HttpFields | undefined;
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    if (tag === STRING_FIELD.http) http = readHttp(reader);
    else reader.skip(tag & 7);
  }
  reader.leave(outer);
  return http;
}

function readHttp(reader: ProtoWireReader): HttpFields {
  const outer = reader.enter();
  const http: HttpFields = { id: '', method: '', headers: {}, path: '', host: '', scheme: '', query: '' };
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    switch (tag) {
      case STRING_FIELD.headers: {
        const [key, value] = readStringPair(reader);
        http.headers[key] = value;
        break;
      }
      case STRING_FIELD.id:
        http.id = reader.string();
        break;
      case STRING_FIELD.method:
        http.method = reader.string();
        break;
      case STRING_FIELD.path:
        http.path = reader.string();
        break;
      case STRING_FIELD.host:
        http.host = reader.string();
        break;
      case STRING_FIELD.scheme:
        http.scheme = reader.string();
        break;
      case STRING_FIELD.query:
        http.query = reader.string();
        break;
      default:
        reader.skip(tag & 7);
    }
  }
  reader.leave(outer);
  return http;
}

/** One `map<string, string>` entry; a missing key or value is ''. */
function readStringPair(reader: ProtoWireReader): [string, string] {
  const outer = reader.enter();
  let key = '';
  let value = '';
  while (reader.pos < reader.limit) {
    const tag = reader.tag();
    if (tag === STRING_FIELD.key) key = reader.string();
    else if (tag === STRING_FIELD.value) value = reader.string();
    else reader.skip(tag & 7);
  }
  reader.leave(outer);
  return [key, value];
}
