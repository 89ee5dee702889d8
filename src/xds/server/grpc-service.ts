import type * as grpc from '@grpc/grpc-js';
import {
  decodeDeltaResponse,
  decodeSotwResponse,
  encodeDeltaRequest,
  encodeSotwRequest,
  parseDeltaRequest,
  parseSotwRequest,
} from './messages.js';
import type {
  DecodedDeltaResponse,
  DecodedSotwResponse,
  DeltaRequest,
  DeltaRequestInit,
  MalformedRequest,
  SotwRequest,
  SotwRequestInit,
} from './messages.js';

/** Fully qualified name of Envoy's aggregated discovery service. */
export const ADS_SERVICE_NAME = 'envoy.service.discovery.v3.AggregatedDiscoveryService';

/**
 * One bidi method with the client and server halves typed separately: the server reads parsed
 * requests and writes already-encoded response bytes; a client writes request objects and reads
 * decoded responses. grpc-js types a method with one request and one response type, so this shape
 * keeps our own code typed while still satisfying `grpc.ServiceDefinition`.
 */
export interface AdsMethod<ClientRequest, ServerRequest, ClientResponse> {
  readonly path: string;
  readonly requestStream: true;
  readonly responseStream: true;
  readonly originalName: string;
  readonly requestSerialize: (request: ClientRequest) => Buffer;
  readonly requestDeserialize: (bytes: Buffer) => ServerRequest;
  readonly responseSerialize: (response: Uint8Array) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => ClientResponse;
}

/** The ADS service definition with protobufjs (de)serializers; shared by the server and test clients. */
export interface AdsServiceDefinition {
  readonly StreamAggregatedResources: AdsMethod<
    SotwRequestInit,
    SotwRequest | MalformedRequest,
    DecodedSotwResponse
  >;
  readonly DeltaAggregatedResources: AdsMethod<
    DeltaRequestInit,
    DeltaRequest | MalformedRequest,
    DecodedDeltaResponse
  >;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * `StreamAggregatedResources` (SotW) and `DeltaAggregatedResources` (incremental), both
 * bidirectional streams (xDS protocol, "RPC Services and Methods for Each Variant"). Responses are
 * passed to grpc-js as encoded bytes, so `responseSerialize` only adapts the buffer type; request
 * deserializers never throw (see messages.ts).
 */
export const ADS_SERVICE: AdsServiceDefinition = {
  StreamAggregatedResources: {
    path: `/${ADS_SERVICE_NAME}/StreamAggregatedResources`,
    requestStream: true,
    responseStream: true,
    originalName: 'streamAggregatedResources',
    requestSerialize: encodeSotwRequest,
    requestDeserialize: parseSotwRequest,
    responseSerialize: asBuffer,
    responseDeserialize: decodeSotwResponse,
  },
  DeltaAggregatedResources: {
    path: `/${ADS_SERVICE_NAME}/DeltaAggregatedResources`,
    requestStream: true,
    responseStream: true,
    originalName: 'deltaAggregatedResources',
    requestSerialize: encodeDeltaRequest,
    requestDeserialize: parseDeltaRequest,
    responseSerialize: asBuffer,
    responseDeserialize: decodeDeltaResponse,
  },
};

/** The definition in grpc-js's own (untyped) form, for `Server.addService` and `makeClientConstructor`. */
export const ADS_GRPC_DEFINITION: grpc.ServiceDefinition = ADS_SERVICE as unknown as grpc.ServiceDefinition;

/** The server-side call of the SotW method. */
export type SotwCall = grpc.ServerDuplexStream<SotwRequest | MalformedRequest, Uint8Array>;

/** The server-side call of the delta method. */
export type DeltaCall = grpc.ServerDuplexStream<DeltaRequest | MalformedRequest, Uint8Array>;
