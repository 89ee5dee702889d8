import * as grpc from '@grpc/grpc-js';
import { messageType } from '../../src/proto/proto-root.js';

/** The gRPC path of ext_authz Check. */
const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';
const GRPC_OK = 0;
const GRPC_PERMISSION_DENIED = 7;
const OVERWRITE_IF_EXISTS_OR_ADD = 2;

/** What one Check carried (decoded from the CheckRequest Envoy sent). */
export interface SeenCheck {
  readonly host: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** How the counting server answers each Check. */
export interface AuthzAnswer {
  /** `allow`: gRPC OK with `setHeaders`; `deny`: a 403 denied_response. */
  readonly kind: 'allow' | 'deny';
  /** Request headers an allow sets upstream (OVERWRITE_IF_EXISTS_OR_ADD). */
  readonly setHeaders?: Readonly<Record<string, string>>;
  /**
   * With an allow, whether to remove every `x-portcullis-*` header the Check carried that it does
   * not set, as Portcullis's authorizer does (authorizer.ts `strippedHeaders`).
   */
  readonly removeReserved?: boolean;
}

/** A running counting ext_authz server; see `startCountingAuthz`. */
export interface CountingAuthz {
  /** `127.0.0.1:<port>` */
  readonly port: number;
  /** Checks answered so far. */
  readonly count: number;
  /** Every Check seen, oldest first. */
  readonly seen: readonly SeenCheck[];
  /** Sets the answer for the following Checks. */
  answer(next: AuthzAnswer): void;
  stop(): Promise<void>;
}

const bytesIn = (bytes: Buffer): Buffer => bytes;
const bytesOut = (bytes: Uint8Array): Buffer => Buffer.from(bytes);

/**
 * A real grpc-js `envoy.service.auth.v3.Authorization/Check` server on 127.0.0.1 that counts
 * every Check and answers as told (allow by default), encoding with the project's protobufjs root
 * (src/proto). It stands in for Portcullis's authorizer, so a test can see whether Envoy asked.
 */
export async function startCountingAuthz(): Promise<CountingAuthz> {
  const requestType = messageType('envoy.service.auth.v3.CheckRequest');
  const responseType = messageType('envoy.service.auth.v3.CheckResponse');
  let current: AuthzAnswer = { kind: 'allow' };
  const seen: SeenCheck[] = [];
  const server = new grpc.Server();
  const service: grpc.ServiceDefinition = {
    Check: {
      path: CHECK_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: bytesOut,
      requestDeserialize: bytesIn,
      responseSerialize: bytesOut,
      responseDeserialize: bytesIn,
    },
  };
  server.addService(service, {
    Check: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Uint8Array>) => {
      const decoded = requestType.toObject(requestType.decode(call.request)) as {
        attributes?: {
          request?: { http?: { host?: string; path?: string; headers?: Record<string, string> } };
        };
      };
      const http = decoded.attributes?.request?.http ?? {};
      seen.push({ host: http.host ?? '', path: http.path ?? '', headers: http.headers ?? {} });
      const headers = Object.entries(current.setHeaders ?? {}).map(([key, value]) => ({
        header: { key, value },
        append_action: OVERWRITE_IF_EXISTS_OR_ADD,
      }));
      const set = new Set(Object.keys(current.setHeaders ?? {}).map((name) => name.toLowerCase()));
      const headersToRemove =
        current.removeReserved === true
          ? Object.keys(http.headers ?? {}).filter(
              (name) => name.startsWith('x-portcullis-') && !set.has(name),
            )
          : [];
      const response =
        current.kind === 'allow'
          ? { status: { code: GRPC_OK }, ok_response: { headers, headers_to_remove: headersToRemove } }
          : {
              status: { code: GRPC_PERMISSION_DENIED },
              denied_response: { status: { code: 403 }, body: 'denied by the counting authz' },
            };
      callback(null, responseType.encode(responseType.fromObject(response)).finish());
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  return {
    port,
    get count() {
      return seen.length;
    },
    seen,
    answer(next) {
      current = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
        server.forceShutdown();
      }),
  };
}
