/**
 * The bounds of the one gRPC server on `grpc_address` (ADS and ext_authz Check): what any client
 * that reaches the port can make Portcullis hold, in streams, bytes and time. Measured with the
 * real command on loopback (test/integration/grpc-port-robustness.test.ts keeps each as a test).
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialChecker } from '../contract/grpc-credential.js';
import type { Logger } from '../shared/logger.js';

/**
 * grpc-js options of the gRPC server. Envoy stays far inside each:
 * - receive: a CheckRequest is a few KiB and an ADS request lists resource names (~0.5 MiB at
 *   10,000 hosts); send: a state-of-the-world response at 10,000 routes is ~6 MiB.
 * - streams per connection: ADS uses one; ext_authz shares one connection per Envoy worker, and
 *   Envoy opens another connection when a connection's limit is reached.
 * - idle: a connection with no stream for 5 minutes is closed with GOAWAY (Envoy reconnects on its
 *   next request), which also reaps connections that never complete the HTTP/2 preface.
 * - keepalive: the server pings every minute and drops a peer that does not answer in 20 s.
 * - session memory (MiB, Node's `maxSessionMemory`): new streams are refused (ENHANCE_YOUR_CALM)
 *   while one connection's HTTP/2 buffers exceed it; grpc-js's default disables the check. It
 *   does not count the partial messages grpc-js assembles: `credentialGate` bounds those.
 * Channelz is off: nothing reads it, and its per-call bookkeeping costs ~10% CPU per Check.
 *
 * Bounds grpc-js does not expose, and where they come from instead:
 * - header list size: Node's HTTP/2 defaults, 64 KiB (`maxHeaderListSize`) and 128 fields
 *   (`maxHeaderListPairs`); a longer list resets its stream. nghttp2 ends a connection that sends
 *   a run of CONTINUATION frames (the CONTINUATION flood), empty ones included.
 * - connections: grpc-js has no limit on concurrent connections (one would need the listener
 *   owned here, through `createConnectionInjector`). Idle ones are cheap (500 idle connections:
 *   under +20 MiB RSS) and closed by the idle timeout.
 * - total buffered memory: a Check's message is read only after its metadata passed
 *   `credentialGate`, and an ADS stream without the credential is refused at its start, so a
 *   client without the credential makes Portcullis hold no message bytes (60 connections each
 *   sending 4 MiB: +10 to +36 MiB RSS, against +190 to +240 MiB without the gate). Envoy, which
 *   has the credential, is trusted within the per-message and per-connection bounds above.
 */
export const GRPC_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
  'grpc.max_concurrent_streams': 1000,
  'grpc.max_connection_idle_ms': 5 * 60_000,
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
  'grpc-node.max_session_memory': 64,
  'grpc.enable_channelz': 0,
};

/**
 * A server interceptor that ends a call whose request is one message (Check; not the ADS streams)
 * with UNAUTHENTICATED as soon as its headers arrive if its metadata lacks `credential`, before
 * any of its message is read. grpc-js assembles a unary call's message in full before the handler
 * runs, so without this gate any peer could make Portcullis hold 4 MiB per stream, 1,000 streams
 * per connection, before the Check service could look at the credential. Streaming calls (ADS)
 * reach their handler at their start, which refuses them itself before reading. The services keep
 * their own checks (they are also registered on servers without this gate, in tests).
 */
export function credentialGate(credential: string, logger: Logger): grpc.ServerInterceptor {
  const isValid = grpcCredentialChecker(credential);
  return (method, call) =>
    method.requestStream
      ? new grpc.ServerInterceptingCall(call)
      : new grpc.ServerInterceptingCall(call, {
          start(next) {
            next({
              onReceiveMetadata(metadata, passOn) {
                if (isValid(metadata.get(GRPC_CREDENTIAL_METADATA_KEY))) {
                  passOn(metadata);
                  return;
                }
                logger.warn(
                  { method: method.path, peer: peerOf(call) },
                  'gRPC call refused (UNAUTHENTICATED) before its message was read: no valid Portcullis gRPC credential in its metadata',
                );
                call.sendStatus({
                  code: grpc.status.UNAUTHENTICATED,
                  details: 'a valid Portcullis gRPC credential is required',
                  metadata: new grpc.Metadata(),
                });
              },
            });
          },
        });
}

/** `GRPC_SERVER_OPTIONS` with `credentialGate`: the options of the server on `grpc_address`. */
export function grpcServerOptions(credential: string, logger: Logger): grpc.ServerOptions {
  return { ...GRPC_SERVER_OPTIONS, interceptors: [credentialGate(credential, logger)] };
}

function peerOf(call: grpc.ServerInterceptingCallInterface): string {
  try {
    return call.getPeer();
  } catch {
    return 'unknown';
  }
}
