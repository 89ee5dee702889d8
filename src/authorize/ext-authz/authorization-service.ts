import * as grpc from '@grpc/grpc-js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { AuthorizeRequest, Decision } from '../decision.js';
import { CHECK_METHOD_PATH } from './check-call.js';
import { readCheckRequest } from './check-request-reader.js';
import { writeCheckResponse } from './check-response-writer.js';

/** Decides one request; the gRPC layer only converts types around it. */
export type Authorizer = (request: AuthorizeRequest) => Decision | Promise<Decision>;

const toBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const passThrough = (bytes: Buffer): Buffer => bytes;

/**
 * `envoy.service.auth.v3.Authorization/Check` on grpc-js. Requests are decoded by hand from raw
 * bytes (the service definition passes buffers through) by the hand-written codec, so only the
 * fields authorization needs are read. A handler failure answers gRPC INTERNAL: Envoy then returns `status_on_error` (503),
 * never an allow.
 */
export const AUTHORIZATION_SERVICE: grpc.ServiceDefinition = {
  Check: {
    path: CHECK_METHOD_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: toBuffer,
    requestDeserialize: passThrough,
    responseSerialize: toBuffer,
    responseDeserialize: passThrough,
  },
};

/** Adds the Authorization service to `server`, answering with `authorize`. */
export function registerAuthorizationService(
  server: grpc.Server,
  authorize: Authorizer,
  logger: Logger,
): void {
  server.addService(AUTHORIZATION_SERVICE, {
    Check: (call: grpc.ServerUnaryCall<Uint8Array, Uint8Array>, callback: grpc.sendUnaryData<Uint8Array>) => {
      let request: AuthorizeRequest;
      try {
        request = readCheckRequest(call.request);
      } catch (err) {
        logger.warn({ error: errorMessage(err) }, 'ext_authz: undecodable CheckRequest');
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'undecodable CheckRequest' });
        return;
      }
      Promise.resolve()
        .then(() => authorize(request))
        .then(
          (decision) => callback(null, writeCheckResponse(decision)),
          (err: unknown) => {
            logger.error(
              { error: errorMessage(err), route_id: request.routeId, request_id: request.requestId },
              'ext_authz: decision failed',
            );
            callback({ code: grpc.status.INTERNAL, details: 'authorization failed' });
          },
        );
    },
  });
}
