import { ACCESS_LOG_USER_KEYS } from '../../contract/access-log.js';
import { decodeRouteContext } from '../../contract/authz.js';
import { messageType } from '../../proto/proto-root.js';
import type { AuthorizeRequest, Decision } from '../decision.js';

const APPEND_IF_EXISTS_OR_ADD = 0;
const OVERWRITE_IF_EXISTS_OR_ADD = 2;
const GRPC_OK = 0;
const GRPC_PERMISSION_DENIED = 7;
const GRPC_UNAUTHENTICATED = 16;

/**
 * Converts between ext_authz wire messages and the authorizer's own types, with protobufjs doing
 * every byte of protobuf (the reflection types of `proto/envoy.json`).
 */
export interface CheckCodec {
  /**
   * Decodes a CheckRequest into an AuthorizeRequest. Missing parts become empty strings, so a
   * sparse request is denied by policy rather than crashing the handler; bytes that are not a
   * CheckRequest throw (protobufjs's error): the caller answers INVALID_ARGUMENT.
   */
  decodeRequest(bytes: Uint8Array): AuthorizeRequest;
  /**
   * Encodes a Decision as a CheckResponse. Allow: gRPC OK with headers set (overwriting, so a
   * client-supplied copy never survives) and removed, response headers for the client
   * (`response_headers_to_add`, appended beside the upstream's own), and the signed-in user's id and email as
   * dynamic metadata (`user`, `email`) for Envoy's access log (compile/access-log.ts). Deny: the HTTP status, headers and body
   * Envoy returns to the client, with gRPC UNAUTHENTICATED for 401 and PERMISSION_DENIED otherwise.
   */
  encodeResponse(decision: Decision): Uint8Array;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- decoded protobufjs messages are untyped trees */

/**
 * Builds the codec over the CheckRequest and CheckResponse types, looked up once here so a call
 * only decodes or encodes. The caller holds it (one per registered service).
 */
export function createCheckCodec(): CheckCodec {
  const requestType = messageType('envoy.service.auth.v3.CheckRequest');
  const responseType = messageType('envoy.service.auth.v3.CheckResponse');
  return {
    decodeRequest: (bytes) => toAuthorizeRequest(requestType.decode(bytes) as any),
    encodeResponse: (decision) => responseType.encode(toCheckResponse(decision)).finish(),
  };
}

function toAuthorizeRequest(message: any): AuthorizeRequest {
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

function toCheckResponse(decision: Decision): Record<string, unknown> {
  const headerOptions = (
    headers: readonly (readonly [string, string])[],
    action = OVERWRITE_IF_EXISTS_OR_ADD,
  ): object[] => headers.map(([key, value]) => ({ header: { key, value }, append_action: action }));
  if (decision.kind === 'allow') {
    return {
      status: { code: GRPC_OK, message: '' },
      ok_response: {
        headers: headerOptions(decision.setHeaders),
        headers_to_remove: [...decision.removeHeaders],
        // Appended: a Set-Cookie of the upstream's own stays beside the decision token's.
        ...(decision.responseHeaders === undefined
          ? {}
          : { response_headers_to_add: headerOptions(decision.responseHeaders, APPEND_IF_EXISTS_OR_ADD) }),
      },
      ...(decision.user === undefined ? {} : { dynamic_metadata: userMetadata(decision.user) }),
    };
  }
  return {
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
}

/**
 * The user as a `google.protobuf.Struct` (protobufjs's camelCase member names): Envoy puts it under
 * the ext_authz filter's namespace, where the access log's `%DYNAMIC_METADATA(...)%` reads it.
 */
function userMetadata(user: { readonly id: string; readonly email: string | undefined }): object {
  return {
    fields: {
      [ACCESS_LOG_USER_KEYS.id]: { stringValue: user.id },
      ...(user.email === undefined ? {} : { [ACCESS_LOG_USER_KEYS.email]: { stringValue: user.email } }),
    },
  };
}
