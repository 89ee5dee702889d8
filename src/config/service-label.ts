import { SERVICE_NAMES, type ServiceName } from './types.js';

/**
 * The `service` label of a process's logs, metrics and traces (spec section 9, 0.8.0):
 * `portcullis` in all-in-one mode, `portcullis-<service>` when split (services joined with `-`
 * when a process runs several, in the order authenticate, authorize, proxy, databroker). Here, in
 * the config layer, so translate (Envoy's tracing service name) and the runtime share one rule.
 */
export function serviceLabel(services: readonly ServiceName[]): string {
  return services.length === SERVICE_NAMES.length ? 'portcullis' : `portcullis-${services.join('-')}`;
}
