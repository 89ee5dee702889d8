import type { Config, ServiceName } from '../config/types.js';
import { PortcullisError } from '../shared/errors.js';

/**
 * The parts one process runs, read from `services` (spec section 1): the composition root starts
 * each part only when its service is listed, so a service can run alone once issue 25 lands.
 * - `authorize`: ext_authz Check on the gRPC listener, and its authorization state per config.
 * - `proxy`: the xDS snapshot per config, the ADS server, and (unless sidecar) the supervised Envoy.
 * - `databroker`: the session store.
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

/**
 * The parts of `config` this version can run: all-in-one only. `validate` already refuses other
 * `services` values (the option table marks them, issue 25); this is the composition root's own
 * guard, so no path starts a lone service that would silently run as all-in-one.
 */
export function runnableParts(config: Config): ServiceParts {
  if (!config.all_in_one) {
    throw new PortcullisError(
      'SERVICES_NOT_SUPPORTED',
      `services: ${config.services.join(',')}: running services in separate processes is not supported yet (issue 25); use services: all`,
    );
  }
  return servicePartsOf(config.services);
}
