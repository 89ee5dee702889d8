import type protobuf from 'protobufjs';
import { decodeRouteContext } from '../../contract/authz.js';
import { messageType } from '../../xds/codec/proto-root.js';
import type { AuthorizeRequest, Decision } from '../decision.js';

const OVERWRITE_IF_EXISTS_OR_ADD = 2;
const GRPC_OK = 0;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

let checkRequestType: protobuf.Type | undefined;
let checkResponseType: protobuf.Type | undefined;

/* eslint-disable @typescript-eslint/no-explicit-any -- decoded protobufjs messages are untyped trees */

/**
 * Decodes a CheckRequest's wire bytes straight into an AuthorizeRequest, reading only the fields
 * authorization needs (no toObject, no copies of the whole tree). Missing parts become empty
 * strings, so a malformed request is denied by policy rather than crashing the handler.
 */
export function decodeCheckRequest(bytes: Uint8Array): AuthorizeRequest {
  checkRequestType ??= messageType('envoy.service.auth.v3.CheckRequest');
  const message = checkRequestType.decode(bytes) as any;
  const attributes = message.attributes ?? {};
  const http = attributes.request?.http ?? {};
  const rawPath: string = http.path ?? '';
  const cut = rawPath.search(/[?#]/);
  return {
    routeId: decodeRouteContext(attributes.context_extensions),
    // Envoy's x-request-id is what its access logs show; its stream id is only a fallback.
    requestId: http.headers?.['x-request-id'] ?? http.id ?? '',
    method: http.method ?? '',
    scheme: (http.scheme ?? '').toLowerCase(),
    host: http.host ?? '',
    path: cut < 0 ? rawPath : rawPath.slice(0, cut),
    query:
      http.query || (cut >= 0 && rawPath[cut] === '?' ? (rawPath.slice(cut + 1).split('#')[0] ?? '') : ''),
    headers: http.headers ?? {},
    sourceIp: attributes.source?.address?.socket_address?.address ?? '',
  };
}

/**
 * Encodes a Decision as a CheckResponse. Allow: gRPC OK with headers set (overwriting, so a
 * client-supplied copy never survives) and removed. Deny: the HTTP status, headers and body Envoy
 * returns to the client, with gRPC UNAUTHENTICATED for 401 and PERMISSION_DENIED otherwise.
 */
export function encodeCheckResponse(decision: Decision): Uint8Array {
  checkResponseType ??= messageType('envoy.service.auth.v3.CheckResponse');
  const headerOptions = (headers: readonly (readonly [string, string])[]): object[] =>
    headers.map(([key, value]) => ({ header: { key, value }, append_action: OVERWRITE_IF_EXISTS_OR_ADD }));
  const response =
    decision.kind === 'allow'
      ? {
          status: { code: GRPC_OK, message: '' },
          ok_response: {
            headers: headerOptions(decision.setHeaders),
            headers_to_remove: [...decision.removeHeaders],
          },
        }
      : {
          status: {
            code: decision.status === 401 ? GRPC_UNAUTHENTICATED : GRPC_PERMISSION_DENIED,
            message: decision.reasons[0] ?? '',
          },
          denied_response: {
            status: { code: decision.status },
            headers: headerOptions(decision.headers),
            body: decision.body,
          },
        };
  return checkResponseType.encode(response).finish();
}
