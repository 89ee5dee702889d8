import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { AuthorizeRequest, Decision } from '../decision.js';
import type { Authorizer } from './authorization-service.js';
import { readCheckRequest } from './check-request-reader.js';
import { writeCheckResponse } from './check-response-writer.js';

/** gRPC status codes the Check call answers with (https://grpc.github.io/grpc/core/md_doc_statuscodes.html). */
export const GRPC_INVALID_ARGUMENT = 3;
export const GRPC_RESOURCE_EXHAUSTED = 8;
export const GRPC_UNIMPLEMENTED = 12;
export const GRPC_INTERNAL = 13;

/** The one method the h2c server serves. */
export const CHECK_METHOD_PATH = '/envoy.service.auth.v3.Authorization/Check';

/** Largest CheckRequest accepted (grpc-js's default receive limit is 4 MiB; Envoy sends far less). */
export const MAX_CHECK_MESSAGE_BYTES = 1024 * 1024;
/** The length prefix of a gRPC message on the wire. */
export const GRPC_PREFIX_BYTES = 5;

/** A Check that ends in a gRPC error instead of a CheckResponse. */
export class CheckFailure {
  constructor(
    readonly grpcStatus: number,
    readonly message: string,
  ) {}
}

/** The encoded CheckResponse, or the gRPC error to answer. */
export type CheckOutcome = Buffer | CheckFailure;

/**
 * Answers one unary Check from its complete request body (the length-prefixed gRPC message):
 * unframe, read the CheckRequest, authorize, write the CheckResponse. Synchronous when the
 * authorizer is (the hot path: no promise, no tick), a Promise when it returns one. Never throws
 * and never rejects: a malformed frame is INTERNAL (compressed: UNIMPLEMENTED, over 1 MiB:
 * RESOURCE_EXHAUSTED), an undecodable message INVALID_ARGUMENT, a failing authorizer INTERNAL,
 * which Envoy turns into its `status_on_error` (503): never an allow.
 */
export function answerCheck(
  body: Buffer,
  authorize: Authorizer,
  logger: Logger,
): CheckOutcome | Promise<CheckOutcome> {
  if (body.length < GRPC_PREFIX_BYTES) return new CheckFailure(GRPC_INTERNAL, 'truncated gRPC frame');
  if (body[0] !== 0) return new CheckFailure(GRPC_UNIMPLEMENTED, 'compressed messages are not supported');
  const length = body.readUInt32BE(1);
  if (length > MAX_CHECK_MESSAGE_BYTES) {
    return new CheckFailure(GRPC_RESOURCE_EXHAUSTED, 'message larger than 1 MiB');
  }
  if (body.length !== GRPC_PREFIX_BYTES + length) {
    return new CheckFailure(GRPC_INTERNAL, 'a unary call needs exactly one complete message');
  }
  let request: AuthorizeRequest;
  try {
    request = readCheckRequest(body.subarray(GRPC_PREFIX_BYTES));
  } catch (err) {
    logger.warn({ error: errorMessage(err) }, 'ext_authz: undecodable CheckRequest');
    return new CheckFailure(GRPC_INVALID_ARGUMENT, 'undecodable CheckRequest');
  }
  let result: Decision | Promise<Decision>;
  try {
    result = authorize(request);
  } catch (err) {
    return decisionFailed(err, request, logger);
  }
  if (!isThenable(result)) return encodeDecision(result, request, logger);
  return Promise.resolve(result).then(
    (decision) => encodeDecision(decision, request, logger),
    (err: unknown) => decisionFailed(err, request, logger),
  );
}

// Module-level rather than closures per call: the hot path allocates no functions when the
// authorizer answers synchronously.
function encodeDecision(decision: Decision, request: AuthorizeRequest, logger: Logger): CheckOutcome {
  try {
    return writeCheckResponse(decision);
  } catch (err) {
    return decisionFailed(err, request, logger);
  }
}

function decisionFailed(err: unknown, request: AuthorizeRequest, logger: Logger): CheckFailure {
  logger.error(
    { error: errorMessage(err), route_id: request.routeId, request_id: request.requestId },
    'ext_authz: decision failed',
  );
  return new CheckFailure(GRPC_INTERNAL, 'authorization failed');
}

function isThenable(value: Decision | Promise<Decision>): value is Promise<Decision> {
  return typeof (value as { then?: unknown }).then === 'function';
}
