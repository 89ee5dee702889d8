import type * as grpc from '@grpc/grpc-js';
import { internalCallAuthorizer } from '../grpc/internal-grpc.js';
import type { RecordBackend } from '../session/records.js';
import type { Logger } from '../shared/logger.js';
import { registerDatabrokerService, type DatabrokerService } from './grpc/service.js';

/** What the databroker service needs from the process that runs it. */
export interface DatabrokerDeps {
  /** This process's record store (memory or Redis), opened with the session stack. */
  readonly backend: RecordBackend;
  /** The process's gRPC server, where the databroker service is registered. */
  readonly grpcServer: grpc.Server;
  /** The shared secret (the key ring's) that other services' internal tokens are checked with. */
  readonly sharedSecret: () => Uint8Array;
  readonly logger: Logger;
}

/**
 * Starts the databroker service: the record store served over gRPC to the other Portcullis
 * processes, each call checked for an internal token for the `databroker` audience.
 */
export function startDatabroker(deps: DatabrokerDeps): DatabrokerService {
  return registerDatabrokerService(deps.grpcServer, deps.backend, {
    authorize: internalCallAuthorizer(deps.sharedSecret, 'databroker'),
    logger: deps.logger,
  });
}
