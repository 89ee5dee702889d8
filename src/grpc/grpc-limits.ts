/**
 * The bounds of the gRPC server on `grpc_address` (ADS, ext_authz Check, the databroker and the
 * health service, whichever the process runs): who may call which method (`credentialGate`), and
 * what any client that reaches the port can make Portcullis hold, in streams, bytes and time.
 * Measured with the real command on loopback (test/integration/grpc-port-robustness.test.ts keeps
 * each as a test).
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_CREDENTIAL_METADATA_KEY, grpcCredentialChecker } from '../contract/grpc-credential.js';
import type { Logger } from '../shared/logger.js';
import { internalCallAuthorizer } from './internal-grpc.js';

/**
 * grpc-js options of the gRPC server. Envoy stays far inside each:
 * - receive: a CheckRequest is a few KiB and an ADS request lists resource names (~0.5 MiB at
 *   10,000 hosts); send: a state-of-the-world response at 10,000 routes is ~6 MiB.
 * - streams per connection: 100 (the threat notes' bound, as Envoy's own listeners use); nghttp2
 *   refuses a stream past it with REFUSED_STREAM. ADS uses one; ext_authz shares one connection
 *   per Envoy worker, and Envoy opens another connection when a connection's limit is reached.
 * - idle: a connection with no stream for 5 minutes is closed with GOAWAY (Envoy reconnects on its
 *   next request), which also reaps connections that never complete the HTTP/2 preface.
 * - keepalive: the server pings every 5 s and drops a peer that does not answer in 10 s. This is
 *   also the header timeout and the reaper of dead connections: a client inside a header block
 *   (CONTINUATION frames without END_HEADERS) cannot answer a PING, and a connection nghttp2 ended
 *   with GOAWAY after a protocol error is no longer read (its peer's close goes unseen), so either
 *   is destroyed within 15 s. Envoy and grpc-js answer pings at once.
 * - session memory (MiB, Node's `maxSessionMemory`): new streams are refused (ENHANCE_YOUR_CALM)
 *   while one connection's HTTP/2 buffers exceed it; grpc-js's default disables the check. It
 *   does not count the partial messages grpc-js assembles: `credentialGate` bounds those.
 * Channelz is off: nothing reads it, and its per-call bookkeeping costs ~10% CPU per Check.
 *
 * Bounds grpc-js does not expose, and where they come from instead:
 * - header list size: Node's HTTP/2 defaults, 64 KiB (`maxHeaderListSize`) and 128 fields
 *   (`maxHeaderListPairs`); a longer list resets its stream. nghttp2 ends a connection that sends
 *   a run of CONTINUATION frames (the CONTINUATION flood), empty ones included.
 * - connections: grpc-js has no limit on concurrent connections; the listener is owned by
 *   grpc-listener.ts instead, which bounds them per peer and overall. Idle ones are cheap (500
 *   idle connections: under +20 MiB RSS).
 * - total buffered memory: a Check's or databroker call's message is read only after its
 *   metadata passed `credentialGate`, and an ADS stream without the credential is refused at its
 *   start, so a client without a credential makes Portcullis hold no message bytes (60 connections each
 *   sending 4 MiB: +10 to +36 MiB RSS, against +190 to +240 MiB without the gate). Envoy, which
 *   has the credential, is trusted within the per-message and per-connection bounds above.
 */
export const GRPC_SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 16 * 1024 * 1024,
  'grpc.max_concurrent_streams': 100,
  'grpc.max_connection_idle_ms': 5 * 60_000,
  'grpc.keepalive_time_ms': 5_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc-node.max_session_memory': 64,
  'grpc.enable_channelz': 0,
};

/** What the gRPC server's gate needs: Envoy's static credential and the internal-token secret. */
export interface GrpcGate {
  /** The credential Envoy presents on ADS and Check (contract/grpc-credential.ts); secret. */
  readonly envoyCredential: string;
  /** The decoded `shared_secret`, read on each check that needs it (internal tokens). */
  readonly internalSecret: () => Uint8Array;
  readonly logger: Logger;
}

/**
 * Who may call a method, by its path: Envoy's services (ADS, Check) take Envoy's static
 * credential; the databroker takes internal tokens for audience `databroker`; the gRPC health
 * service is open (load balancers and Kubernetes probe it without credentials, and it reveals
 * only serving status); any other method is refused, so a service registered later without a
 * policy here fails closed.
 */
export type GrpcMethodPolicy = 'envoy' | 'databroker' | 'open' | 'refused';

/** The policy of the method at `path` (`/package.Service/Method`). */
export function grpcMethodPolicy(path: string): GrpcMethodPolicy {
  if (path.startsWith('/envoy.service.')) return 'envoy';
  if (path.startsWith('/portcullis.databroker.')) return 'databroker';
  if (path.startsWith('/grpc.health.v1.Health/')) return 'open';
  return 'refused';
}

/**
 * A server interceptor enforcing `grpcMethodPolicy` as soon as a call's headers arrive, before
 * any of its message is read: grpc-js assembles a unary call's message in full before the handler
 * runs, so without this gate any peer could make Portcullis hold 4 MiB per stream, 1,000 streams
 * per connection, before a service could look at the credential. A call is ended with
 * UNAUTHENTICATED (no valid credential or token) or PERMISSION_DENIED (a method no caller may
 * use); its handler never runs. grpc-js starts every handler, streaming ones included, only after
 * the interceptor passes the metadata on, and an asynchronous token check holds the call's reads
 * until it answers. Envoy's streams (ADS) still reach their handler, which refuses them itself
 * before reading (and counts them); the services keep their own checks (they are also
 * registered on servers without this gate, in tests).
 */
export function credentialGate(gate: GrpcGate): grpc.ServerInterceptor {
  const isEnvoy = grpcCredentialChecker(gate.envoyCredential);
  const isDatabrokerCaller = internalCallAuthorizer(gate.internalSecret, 'databroker');
  return (method, call) => {
    const policy = grpcMethodPolicy(method.path);
    if (policy === 'open' || (policy === 'envoy' && method.requestStream)) {
      return new grpc.ServerInterceptingCall(call);
    }
    const refuse = (code: grpc.status, reason: string): void => {
      gate.logger.warn(
        { method: method.path, peer: peerOf(call) },
        `gRPC call refused (${grpc.status[code]}) before its message was read: ${reason}`,
      );
      call.sendStatus({ code, details: reason, metadata: new grpc.Metadata() });
    };
    return new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, passOn) {
            if (policy === 'refused') {
              refuse(grpc.status.PERMISSION_DENIED, 'no Portcullis caller may call this method');
              return;
            }
            const verdict =
              policy === 'envoy'
                ? isEnvoy(metadata.get(GRPC_CREDENTIAL_METADATA_KEY))
                : isDatabrokerCaller(metadata);
            const reason =
              policy === 'envoy'
                ? 'no valid Portcullis gRPC credential in its metadata'
                : 'no valid internal token for the databroker in its metadata';
            const decide = (ok: boolean): void =>
              ok ? passOn(metadata) : refuse(grpc.status.UNAUTHENTICATED, reason);
            if (typeof verdict === 'boolean') decide(verdict);
            else void verdict.then(decide);
          },
        });
      },
    });
  };
}

/** `GRPC_SERVER_OPTIONS` with `credentialGate`: the options of every Portcullis gRPC server. */
export function grpcServerOptions(gate: GrpcGate): grpc.ServerOptions {
  return { ...GRPC_SERVER_OPTIONS, interceptors: [credentialGate(gate)] };
}

function peerOf(call: grpc.ServerInterceptingCallInterface): string {
  try {
    return call.getPeer();
  } catch {
    return 'unknown';
  }
}
