import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { AuthorizeRequest } from '../decision.js';
import type { Authorizer } from './authorization-service.js';
import { decodeCheckRequest, encodeCheckResponse } from './check-codec.js';

const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';
/** Largest CheckRequest accepted (grpc-js's default receive limit is 4 MiB; Envoy sends far less). */
const MAX_MESSAGE_BYTES = 1024 * 1024;
const FRAME_HEADER_BYTES = 5;

const GRPC_INVALID_ARGUMENT = 3;
const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_UNIMPLEMENTED = 12;
const GRPC_INTERNAL = 13;

const RESPONSE_HEADERS = { ':status': 200, 'content-type': 'application/grpc' } as const;
const OK_TRAILERS = { 'grpc-status': '0' } as const;

/** What `startH2CheckServer` needs. */
export interface H2CheckServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly authorize: Authorizer;
  readonly logger: Logger;
}

/** A running lean Check server. */
export interface H2CheckServer {
  readonly port: number;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/** Answers a stream with a trailers-only gRPC error (headers and status in one HEADERS frame). */
function fail(stream: http2.ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed || stream.closed) return;
  if (stream.headersSent) {
    stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  stream.respond(
    { ...RESPONSE_HEADERS, 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) },
    { endStream: true },
  );
}

/** Sends one framed response message followed by `grpc-status: 0` trailers. */
function reply(stream: http2.ServerHttp2Stream, message: Uint8Array): void {
  if (stream.destroyed || stream.closed) return;
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + message.byteLength);
  frame[0] = 0;
  frame.writeUInt32BE(message.byteLength, 1);
  frame.set(message, FRAME_HEADER_BYTES);
  stream.once('wantTrailers', () => stream.sendTrailers(OK_TRAILERS));
  stream.respond(RESPONSE_HEADERS, { waitForTrailers: true });
  stream.end(frame);
}

/** Reads the single length-prefixed request message, or answers the error and returns undefined. */
function unframe(stream: http2.ServerHttp2Stream, body: Buffer): Buffer | undefined {
  if (body.length < FRAME_HEADER_BYTES) {
    fail(stream, GRPC_INTERNAL, 'truncated gRPC frame');
    return undefined;
  }
  if (body[0] !== 0) {
    fail(stream, GRPC_INTERNAL, 'compressed messages are not supported');
    return undefined;
  }
  const length = body.readUInt32BE(1);
  if (length > MAX_MESSAGE_BYTES) {
    fail(stream, GRPC_RESOURCE_EXHAUSTED, 'message larger than 1 MiB');
    return undefined;
  }
  if (body.length !== FRAME_HEADER_BYTES + length) {
    fail(stream, GRPC_INTERNAL, 'a unary call needs exactly one complete message');
    return undefined;
  }
  return body.subarray(FRAME_HEADER_BYTES);
}

/** Runs decode -> authorize -> encode for one framed request body. */
function handleCheck(
  stream: http2.ServerHttp2Stream,
  body: Buffer,
  authorize: Authorizer,
  logger: Logger,
): void {
  const message = unframe(stream, body);
  if (message === undefined) return;
  let request: AuthorizeRequest;
  try {
    request = decodeCheckRequest(message);
  } catch (err) {
    logger.warn({ error: errorMessage(err) }, 'ext_authz: undecodable CheckRequest');
    fail(stream, GRPC_INVALID_ARGUMENT, 'undecodable CheckRequest');
    return;
  }
  Promise.resolve()
    .then(() => authorize(request))
    .then(
      (decision) => reply(stream, encodeCheckResponse(decision)),
      (err: unknown) => {
        logger.error(
          { error: errorMessage(err), route_id: request.routeId, request_id: request.requestId },
          'ext_authz: decision failed',
        );
        fail(stream, GRPC_INTERNAL, 'authorization failed');
      },
    );
}

/** Collects a Check stream's body (bounded) and hands it to `handleCheck`. */
function onCheckStream(stream: http2.ServerHttp2Stream, authorize: Authorizer, logger: Logger): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let rejected = false;
  stream.on('data', (chunk: Buffer) => {
    if (rejected) return;
    size += chunk.length;
    if (size > FRAME_HEADER_BYTES + MAX_MESSAGE_BYTES) {
      rejected = true;
      fail(stream, GRPC_RESOURCE_EXHAUSTED, 'message larger than 1 MiB');
      return;
    }
    chunks.push(chunk);
  });
  stream.on('end', () => {
    if (rejected) return;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
    try {
      handleCheck(stream, body, authorize, logger);
    } catch (err) {
      logger.error({ error: errorMessage(err) }, 'ext_authz: Check failed');
      fail(stream, GRPC_INTERNAL, 'authorization failed');
    }
  });
}

/**
 * A lean gRPC server for `envoy.service.auth.v3.Authorization/Check` alone, on `node:http2` in
 * cleartext (h2c). It reads the one length-prefixed CheckRequest, runs the same codec and
 * authorizer as the grpc-js service and answers the framed CheckResponse with `grpc-status: 0`
 * trailers. Failures are gRPC errors (undecodable: INVALID_ARGUMENT; compressed or malformed
 * frames and authorizer failures: INTERNAL; over 1 MiB: RESOURCE_EXHAUSTED), which Envoy turns
 * into its `status_on_error` (503), never an allow. Any other method is UNIMPLEMENTED.
 */
export async function startH2CheckServer(options: H2CheckServerOptions): Promise<H2CheckServer> {
  const { authorize, logger } = options;
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    session.on('error', (err) => logger.debug({ error: errorMessage(err) }, 'ext_authz: h2 session error'));
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', (err) => logger.debug({ error: errorMessage(err) }, 'ext_authz: h2 stream error'));
    const contentType = headers['content-type'] ?? '';
    if (headers[':method'] !== 'POST' || !contentType.startsWith('application/grpc')) {
      if (!stream.headersSent) stream.respond({ ':status': 415 }, { endStream: true });
      return;
    }
    if (headers[':path'] !== CHECK_PATH) {
      stream.resume();
      fail(stream, GRPC_UNIMPLEMENTED, `unknown method ${String(headers[':path'])}`);
      return;
    }
    onCheckStream(stream, authorize, logger);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ error: errorMessage(err) }, 'ext_authz: h2 server error'));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}
