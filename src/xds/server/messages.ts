import type protobuf from 'protobufjs';
import { errorMessage } from '../../shared/errors.js';
import { messageType } from '../../proto/proto-root.js';

/**
 * The discovery messages as the ADS server reads and writes them. Requests are decoded once at the
 * gRPC boundary into small typed records (never throwing: a malformed message becomes a
 * `MalformedRequest` the stream logs). Responses are plain objects in the proto's snake_case shape
 * encoded with `Type.encode` (no `fromObject` on the hot path); resources inside them are already
 * encoded `Any`s, so no resource is re-encoded per stream.
 */
const DISCOVERY_REQUEST = 'envoy.service.discovery.v3.DiscoveryRequest';
const DISCOVERY_RESPONSE = 'envoy.service.discovery.v3.DiscoveryResponse';
const DELTA_REQUEST = 'envoy.service.discovery.v3.DeltaDiscoveryRequest';
const DELTA_RESPONSE = 'envoy.service.discovery.v3.DeltaDiscoveryResponse';

/** `google.rpc.Status` as carried in a NACK's `error_detail`. */
export interface ErrorDetail {
  readonly code: number;
  readonly message: string;
}

/** A SotW `DiscoveryRequest`, reduced to the fields the server acts on. */
export interface SotwRequest {
  readonly kind: 'sotw';
  /** `node.id`; only the first request of a stream is guaranteed to carry it. */
  readonly nodeId: string | undefined;
  readonly typeUrl: string;
  readonly versionInfo: string;
  readonly resourceNames: readonly string[];
  readonly responseNonce: string;
  /** Present exactly when the request is a NACK (https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#xds-ack-nack). */
  readonly errorDetail: ErrorDetail | undefined;
}

/** A `DeltaDiscoveryRequest`, reduced to the fields the server acts on. */
export interface DeltaRequest {
  readonly kind: 'delta';
  readonly nodeId: string | undefined;
  readonly typeUrl: string;
  readonly subscribe: readonly string[];
  readonly unsubscribe: readonly string[];
  readonly initialVersions: ReadonlyMap<string, string>;
  readonly responseNonce: string;
  readonly errorDetail: ErrorDetail | undefined;
}

/** A request whose bytes did not decode; the stream logs it instead of failing the call. */
export interface MalformedRequest {
  readonly kind: 'malformed';
  readonly error: string;
  readonly bytes: number;
}

/** `google.protobuf.Any` in the plain shape protobufjs's encoder accepts. */
export interface AnyObject {
  readonly type_url: string;
  readonly value: Uint8Array;
}

/** One `envoy.service.discovery.v3.Resource` of a delta response, as a plain object. */
export interface DeltaResourceObject {
  readonly name: string;
  readonly version: string;
  readonly resource: AnyObject;
}

/** Fields of a SotW `DiscoveryResponse` the server sets. */
export type SotwResponseFields = {
  readonly version_info: string;
  readonly type_url: string;
  readonly resources: readonly AnyObject[];
  readonly nonce?: string;
};

/** Fields of a `DeltaDiscoveryResponse` the server sets. */
export type DeltaResponseFields = {
  readonly system_version_info: string;
  readonly type_url: string;
  readonly resources: readonly DeltaResourceObject[];
  readonly removed_resources: readonly string[];
  readonly nonce: string;
};

interface DecodedStatus {
  code?: number;
  message?: string;
}

interface DecodedRequestBase {
  node?: { id?: string } | null;
  type_url?: string;
  response_nonce?: string;
  error_detail?: DecodedStatus | null;
}

function decodeWith<T>(type: protobuf.Type, bytes: Uint8Array): T | MalformedRequest {
  try {
    return type.decode(bytes) as unknown as T;
  } catch (err) {
    return { kind: 'malformed', error: errorMessage(err), bytes: bytes.length };
  }
}

function errorDetailOf(status: DecodedStatus | null | undefined): ErrorDetail | undefined {
  if (status === null || status === undefined) return undefined;
  return { code: status.code ?? 0, message: status.message ?? '' };
}

function nodeIdOf(decoded: DecodedRequestBase): string | undefined {
  const id = decoded.node?.id;
  return id === undefined || id === '' ? undefined : id;
}

/** Decodes a SotW request; never throws (grpc-js would otherwise end the stream with INTERNAL). */
export function parseSotwRequest(bytes: Uint8Array): SotwRequest | MalformedRequest {
  const decoded = decodeWith<DecodedRequestBase & { version_info?: string; resource_names?: string[] }>(
    messageType(DISCOVERY_REQUEST),
    bytes,
  );
  if ('kind' in decoded) return decoded;
  return {
    kind: 'sotw',
    nodeId: nodeIdOf(decoded),
    typeUrl: decoded.type_url ?? '',
    versionInfo: decoded.version_info ?? '',
    resourceNames: decoded.resource_names ?? [],
    responseNonce: decoded.response_nonce ?? '',
    errorDetail: errorDetailOf(decoded.error_detail),
  };
}

/** Decodes a delta request; never throws. */
export function parseDeltaRequest(bytes: Uint8Array): DeltaRequest | MalformedRequest {
  const decoded = decodeWith<
    DecodedRequestBase & {
      resource_names_subscribe?: string[];
      resource_names_unsubscribe?: string[];
      initial_resource_versions?: Record<string, string>;
    }
  >(messageType(DELTA_REQUEST), bytes);
  if ('kind' in decoded) return decoded;
  return {
    kind: 'delta',
    nodeId: nodeIdOf(decoded),
    typeUrl: decoded.type_url ?? '',
    subscribe: decoded.resource_names_subscribe ?? [],
    unsubscribe: decoded.resource_names_unsubscribe ?? [],
    initialVersions: new Map(Object.entries(decoded.initial_resource_versions ?? {})),
    responseNonce: decoded.response_nonce ?? '',
    errorDetail: errorDetailOf(decoded.error_detail),
  };
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Encodes a SotW response from plain fields (resources are pre-encoded `Any`s, copied not re-encoded). */
export function encodeSotwResponse(fields: SotwResponseFields): Buffer {
  return toBuffer(messageType(DISCOVERY_RESPONSE).encode(fields).finish());
}

/**
 * Appends a nonce to a SotW response body encoded without one. Concatenated protobuf encodings
 * merge (protobuf encoding spec, "Last One Wins" / merging), so a full-set body encoded once per
 * snapshot is shared by every stream and only the few nonce bytes are written per send.
 */
export function withNonce(body: Uint8Array, nonce: string): Buffer {
  const tail = messageType(DISCOVERY_RESPONSE).encode({ nonce }).finish();
  return Buffer.concat([body, tail]);
}

/** Encodes a delta response from plain fields. */
export function encodeDeltaResponse(fields: DeltaResponseFields): Buffer {
  return toBuffer(messageType(DELTA_RESPONSE).encode(fields).finish());
}

/** A SotW request as a test client or tool writes it (proto field names). */
export interface SotwRequestInit {
  readonly type_url: string;
  readonly version_info?: string;
  readonly node?: { readonly id: string };
  readonly resource_names?: readonly string[];
  readonly response_nonce?: string;
  readonly error_detail?: ErrorDetail;
}

/** A delta request as a test client or tool writes it (proto field names). */
export interface DeltaRequestInit {
  readonly type_url: string;
  readonly node?: { readonly id: string };
  readonly resource_names_subscribe?: readonly string[];
  readonly resource_names_unsubscribe?: readonly string[];
  readonly initial_resource_versions?: Readonly<Record<string, string>>;
  readonly response_nonce?: string;
  readonly error_detail?: ErrorDetail;
}

/** Client side: encodes a SotW request (uses `fromObject`; clients are not the hot path). */
export function encodeSotwRequest(init: SotwRequestInit): Buffer {
  const type = messageType(DISCOVERY_REQUEST);
  return toBuffer(type.encode(type.fromObject(init)).finish());
}

/** Client side: encodes a delta request. */
export function encodeDeltaRequest(init: DeltaRequestInit): Buffer {
  const type = messageType(DELTA_REQUEST);
  return toBuffer(type.encode(type.fromObject(init)).finish());
}

/** A decoded SotW response (client side). */
export interface DecodedSotwResponse {
  readonly version_info: string;
  readonly type_url: string;
  readonly nonce: string;
  readonly resources: readonly AnyObject[];
}

/** A decoded delta response (client side). */
export interface DecodedDeltaResponse {
  readonly system_version_info: string;
  readonly type_url: string;
  readonly nonce: string;
  readonly resources: readonly DeltaResourceObject[];
  readonly removed_resources: readonly string[];
}

/** Client side: decodes a SotW response; defaults come from the message prototype. */
export function decodeSotwResponse(bytes: Uint8Array): DecodedSotwResponse {
  return messageType(DISCOVERY_RESPONSE).decode(bytes) as unknown as DecodedSotwResponse;
}

/** Client side: decodes a delta response. */
export function decodeDeltaResponse(bytes: Uint8Array): DecodedDeltaResponse {
  return messageType(DELTA_RESPONSE).decode(bytes) as unknown as DecodedDeltaResponse;
}
