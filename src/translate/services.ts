import type { Config } from '../config/types.js';
import { identityProviders } from '../config/identity-provider.js';
import type { IRObservability, IRProcess, IRSignIn } from '../ir/services.js';
import { splitHostPort } from '../shared/address.js';
import { serviceLabel } from '../shared/service-names.js';

/**
 * How the process runs (services, listeners, how its parts reach each other), from the config.
 * Portcullis's own HTTP endpoints listen on the host of `grpc_address` and the next port (5444
 * beside the default 5443): derived, never picked at random, so a restarted Portcullis compiles
 * the same cluster and a running Envoy rebuilds nothing when it reconnects. A `grpc_address` with
 * port 0 (tests without Envoy) gives port 0: any free port.
 */
export function translateProcess(config: Config): IRProcess {
  const grpc = splitHostPort(config.grpc_address);
  return {
    services: config.services,
    serviceLabel: serviceLabel(config.services),
    grpc,
    grpcInsecure: config.grpc_insecure,
    grpcClientTimeoutMs: config.grpc_client_timeout_ms,
    ownHttp: { host: grpc.host, port: grpc.port === 0 ? 0 : grpc.port + 1 },
    tlsDerive: config.tls_derive,
    certificateAuthorityPem: config.certificate_authority_pem,
    authenticateOrigin: config.authenticate_service_url?.origin,
    envoyAdminAddress: config.envoy_admin_address,
    databroker: {
      storage: config.databroker_storage_type,
      serviceUrl: config.databroker_service_url?.href,
      outageGraceMs: config.databroker_outage_grace_ms,
    },
    routeCount: config.routes.length,
  };
}

/** Log levels, the metrics listener and Portcullis's own tracing, from the config. */
export function translateObservability(config: Config): IRObservability {
  const endpoint = config.otel_exporter_otlp_endpoint;
  return {
    logLevel: config.log_level,
    proxyLogLevel: config.proxy_log_level,
    metricsAddress: config.metrics_address,
    metricsBasicAuth: config.metrics_basic_auth !== undefined,
    tracing:
      endpoint === undefined
        ? undefined
        : {
            endpoint: endpoint.origin,
            protocol: config.otel_exporter_otlp_protocol,
            samplingRate: config.tracing_sampling_rate,
            serviceName: serviceLabel(config.services),
          },
  };
}

/**
 * Sign-in as the authenticate service runs it, without a secret (client secrets are in the key
 * ring by provider id); undefined without `authenticate_service_url` (validation then refuses
 * every route that needs a user).
 */
export function translateSignIn(config: Config): IRSignIn | undefined {
  const url = config.authenticate_service_url;
  if (url === undefined) return undefined;
  return {
    authenticateUrl: url.origin,
    callbackPath: config.authenticate_callback_path,
    cookie: {
      name: config.cookie_name,
      domain: config.cookie_domain,
      expireMs: config.cookie_expire_ms,
      httpOnly: config.cookie_http_only,
      sameSite: config.cookie_same_site,
      secure: !config.insecure_server,
    },
    programmaticRedirectDomains: config.programmatic_redirect_domain_whitelist,
    signoutRedirectUrl: config.signout_redirect_url?.href,
    providers: identityProviders(config)
      .map(({ clientSecret: _secret, id, ...provider }) => ({
        id,
        ...provider,
        providerUrl: provider.providerUrl?.href,
      }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
  };
}
