import * as grpc from '@grpc/grpc-js';
import { messageType } from '../../src/proto/proto-root.js';
import { credentialClientOptions } from './grpc-credential.js';

/** The gRPC path of ext_authz Check. */
export const CHECK_PATH = '/envoy.service.auth.v3.Authorization/Check';

/** How one Check call ended: its gRPC status, and for an OK answer the denied HTTP status (if any). */
export interface CheckOutcome {
  readonly code: grpc.status;
  /** `denied_response.status.code` of an OK answer (0 when it allowed); undefined on an error status. */
  readonly deniedStatus: number | undefined;
}

/**
 * One Check over a real grpc-js client to `address`, presenting `token` (none when undefined), for
 * a request to an unknown route id on `host`: what tests use to show Check still answers (a 404
 * decision) or refuses (UNAUTHENTICATED). Bounded by a 5 s deadline; rejects only when the answer
 * cannot be decoded.
 */
export function callCheck(
  address: string,
  token: string | undefined,
  host = 'app.test',
): Promise<CheckOutcome> {
  const requestType = messageType('envoy.service.auth.v3.CheckRequest');
  const responseType = messageType('envoy.service.auth.v3.CheckResponse');
  const bytes = requestType
    .encode(
      requestType.fromObject({
        attributes: {
          request: { http: { id: 'r1', method: 'GET', host, path: '/', scheme: 'https' } },
          context_extensions: { route_id: 'ffffffffffffffff' },
        },
      }),
    )
    .finish();
  const client = new grpc.Client(
    address,
    grpc.credentials.createInsecure(),
    token === undefined ? {} : credentialClientOptions(token),
  );
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      CHECK_PATH,
      (value: Uint8Array) => Buffer.from(value),
      (value: Buffer) => value,
      bytes,
      { deadline: Date.now() + 5000 },
      (err, response) => {
        client.close();
        if (err) return resolve({ code: err.code, deniedStatus: undefined });
        try {
          const decoded = responseType.toObject(responseType.decode(response as Buffer)) as {
            denied_response?: { status?: { code?: number } };
          };
          resolve({ code: grpc.status.OK, deniedStatus: decoded.denied_response?.status?.code ?? 0 });
        } catch (decodeError) {
          reject(decodeError instanceof Error ? decodeError : new Error(String(decodeError)));
        }
      },
    );
  });
}
