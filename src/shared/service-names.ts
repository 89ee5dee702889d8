/** The logical services a process can run (`services`); `all` expands to every one. */
export const SERVICE_NAMES = ['authenticate', 'authorize', 'proxy', 'databroker'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/**
 * The `service` label of a process's logs, metrics and traces (spec section 9, 0.8.0):
 * `portcullis` in all-in-one mode, `portcullis-<service>` when split (services joined with `-`
 * when a process runs several, in the order authenticate, authorize, proxy, databroker). Here, below
 * every layer, so config, translate (Envoy's tracing service name) and the services share one rule.
 */
export function serviceLabel(services: readonly ServiceName[]): string {
  return services.length === SERVICE_NAMES.length ? 'portcullis' : `portcullis-${services.join('-')}`;
}
