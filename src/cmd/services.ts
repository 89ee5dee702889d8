import type { ServiceName } from '../shared/service-names.js';

/**
 * The parts one process runs, read from `services` (spec section 1): the composition root starts
 * each part only when its service is listed, so a service can run alone.
 * - `authorize`: ext_authz Check on the gRPC listener, and its authorization state per config.
 * - `proxy`: the xDS snapshot per config, the ADS server, and (unless sidecar) the supervised Envoy.
 * - `databroker`: the record store (sessions), served over gRPC to the other processes.
 * - `authenticate`: Portcullis's own HTTP server (sign-in, IdP callback, sign-out, user page,
 *   programmatic login) and the session refresher.
 */
export interface ServiceParts {
  readonly authorize: boolean;
  readonly proxy: boolean;
  readonly databroker: boolean;
  readonly authenticate: boolean;
}

/** Which parts `services` asks this process to run. */
export function servicePartsOf(services: readonly ServiceName[]): ServiceParts {
  return {
    authorize: services.includes('authorize'),
    proxy: services.includes('proxy'),
    databroker: services.includes('databroker'),
    authenticate: services.includes('authenticate'),
  };
}
