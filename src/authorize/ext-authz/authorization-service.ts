import * as grpc from '@grpc/grpc-js';
import { GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialChecker } from '../../contract/grpc-credential.js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { NO_TELEMETRY, decisionOutcome, type Telemetry } from '../../contract/telemetry.js';
import type { AuthorizeRequest, Decision } from '../decision.js';
import { createCheckCodec, type CheckCodec } from './check-codec.js';
import { endCheckSpan, startCheckSpan } from './check-span.js';
import type { SpanStarter } from '../../shared/trace-context.js';

/** Decides one request; the gRPC layer only converts types around it. */
export type Authorizer = (request: AuthorizeRequest) => Decision | Promise<Decision>;

/** The one method of `envoy.service.auth.v3.Authorization` that Envoy's ext_authz calls. */
export const CHECK_METHOD_PATH = '/envoy.service.auth.v3.Authorization/Check';

const toBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const passThrough = (bytes: Buffer): Buffer => bytes;

/**
 * `envoy.service.auth.v3.Authorization/Check` for grpc-js. Messages pass through grpc-js as bytes
 * and the handler decodes them with the protobufjs codec, so an undecodable request is answered
 * INVALID_ARGUMENT (and logged) rather than grpc-js's generic INTERNAL.
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

/**
 * Adds the Authorization service to `server`, answering each Check with `authorize`. Only Envoy
 * may ask: a call whose metadata lacks `credential` (`contract/grpc-credential.ts`) answers
 * UNAUTHENTICATED, logged with its peer, before the request is decoded or decided. A call never
 * ends the process: bytes that do not decode answer INVALID_ARGUMENT, an authorizer that throws or
 * rejects (or a decision that does not encode) answers INTERNAL, each logged with the route and
 * request id. Envoy turns either error into its `status_on_error` (503), never an allow.
 */
export function registerAuthorizationService(
  server: grpc.Server,
  authorize: Authorizer,
  logger: Logger,
  credential: string,
  options: {
    readonly codec?: CheckCodec;
    readonly telemetry?: Telemetry;
    /** Traces each Check as a child of Envoy's span (check-span.ts); none: no spans. */
    readonly tracer?: SpanStarter;
  } = {},
): void {
  const codec = options.codec ?? createCheckCodec();
  const telemetry = options.telemetry ?? NO_TELEMETRY;
  const hasCredential = grpcCredentialChecker(credential);
  const check = (
    call: grpc.ServerUnaryCall<Buffer, Buffer>,
    callback: grpc.sendUnaryData<Uint8Array>,
  ): void => {
    if (!hasCredential(call.metadata.get(GRPC_CREDENTIAL_METADATA_KEY))) {
      logger.warn(
        { peer: call.getPeer() },
        'ext_authz: Check refused (UNAUTHENTICATED): no valid Portcullis gRPC credential in its metadata',
      );
      callback({
        code: grpc.status.UNAUTHENTICATED,
        details: 'a valid Portcullis gRPC credential is required',
      });
      return;
    }
    let request: AuthorizeRequest;
    try {
      request = codec.decodeRequest(call.request);
    } catch (err) {
      logger.warn({ error: errorMessage(err) }, 'ext_authz: undecodable CheckRequest');
      callback({ code: grpc.status.INVALID_ARGUMENT, details: 'undecodable CheckRequest' });
      return;
    }
    const started = performance.now();
    const span = startCheckSpan(options.tracer, call.metadata, request);
    const fail = (err: unknown): void => {
      telemetry.decision('error', (performance.now() - started) / 1000);
      logger.error(
        { error: errorMessage(err), route_id: request.routeId, request_id: request.requestId },
        'ext_authz: decision failed',
      );
      endCheckSpan(span, { error: err });
      callback({ code: grpc.status.INTERNAL, details: 'authorization failed' });
    };
    const answer = (decision: Decision): void => {
      let response: Uint8Array;
      try {
        response = codec.encodeResponse(decision);
      } catch (err) {
        fail(err);
        return;
      }
      telemetry.decision(
        decisionOutcome(decision.kind === 'allow' ? undefined : decision.status),
        (performance.now() - started) / 1000,
      );
      endCheckSpan(span, decision);
      callback(null, response);
    };
    let result: Decision | Promise<Decision>;
    try {
      result = authorize(request);
    } catch (err) {
      fail(err);
      return;
    }
    // A cached decision answers without a promise hop; a signing one answers when it settles.
    if (!(result instanceof Promise)) answer(result);
    else
      result.then(answer, fail).catch((err: unknown) => {
        logger.error({ error: errorMessage(err), request_id: request.requestId }, 'ext_authz: answer failed');
      });
  };
  server.addService(AUTHORIZATION_SERVICE, { Check: check });
}
