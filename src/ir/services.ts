/**
 * What the services need from one config beyond routing, in the IR like everything else translate
 * decides: after parse, translate is the only reader of the config, and every service reads its
 * slice of the IR (and the key ring, for secrets) instead. No secret is here: client secrets, the
 * Redis connection string and the metrics credentials are in the key ring (src/keys/key-ring.ts).
 */
import type { IdpProvider } from '../shared/idp-providers.js';
import type { LogLevel } from '../shared/logger.js';
import type { ServiceName } from '../shared/service-names.js';

/** A host and port to listen on or dial. */
export interface IRAddress {
  readonly host: string;
  readonly port: number;
}

/** How this process runs: which services, where it listens, how its parts reach each other. */
export interface IRProcess {
  /** The services this process runs (`services`, `all` expanded). */
  readonly services: readonly ServiceName[];
  /** `portcullis`, or `portcullis-<services>` when split: the `service` label of logs and metrics. */
  readonly serviceLabel: string;
  /** `grpc_address`: ADS, ext_authz Check, the databroker service and gRPC health. */
  readonly grpc: IRAddress;
  /** `grpc_insecure`: plain-text gRPC was asked for explicitly. */
  readonly grpcInsecure: boolean;
  /** `grpc_client_timeout`: the deadline of each call to another Portcullis service, ms. */
  readonly grpcClientTimeoutMs: number;
  /** Where Portcullis's own HTTP endpoints listen: the host of `grpc_address` and the next port. */
  readonly ownHttp: IRAddress;
  /** `tls_derive`: the DNS name of the derived internal TLS (the key ring holds its certificates). */
  readonly tlsDerive: string | undefined;
  /** `certificate_authority`: the CA internal `https://` service URLs are verified with. */
  readonly certificateAuthorityPem: string | undefined;
  /** The origin of `authenticate_service_url`, for the start-up line. */
  readonly authenticateOrigin: string | undefined;
  /** `envoy_admin_address`: the supervised Envoy's admin listener. */
  readonly envoyAdminAddress: string;
  readonly databroker: IRDatabroker;
  /** How many routes the config has (logs and traces report it). */
  readonly routeCount: number;
}

/** Where sessions are kept. */
export interface IRDatabroker {
  /** `databroker_storage_type`; the Redis URL is in the key ring. */
  readonly storage: 'memory' | 'redis';
  /** `databroker_service_url`: a databroker in another process; absent: this process holds the store. */
  readonly serviceUrl: string | undefined;
  /** `databroker_outage_grace`: how long sessions held in memory outlive a store outage, ms. */
  readonly outageGraceMs: number;
}

/** Logs, metrics and Portcullis's own traces. */
export interface IRObservability {
  readonly logLevel: LogLevel | 'silent';
  /** `proxy_log_level`; absent: Envoy follows `log_level`, with its chattiest components capped. */
  readonly proxyLogLevel: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'critical' | 'off' | undefined;
  /** `metrics_address`; absent: no metrics listener. */
  readonly metricsAddress: string | undefined;
  /** True when `metrics_basic_auth` is set (the credentials are in the key ring). */
  readonly metricsBasicAuth: boolean;
  /** Portcullis's own spans (Check, sign-in callback, reload); absent: not traced. */
  readonly tracing: IRServiceTracing | undefined;
}

/** Where Portcullis sends its own spans. */
export interface IRServiceTracing {
  /** `otel_exporter_otlp_endpoint`. */
  readonly endpoint: string;
  readonly protocol: 'grpc' | 'http/protobuf';
  /** `tracing_sampling_rate`, 0 to 1. */
  readonly samplingRate: number;
  /** `service.name`: the process's `service` label. */
  readonly serviceName: string;
}

/** Sign-in, as the authenticate service runs it; absent when `authenticate_service_url` is not set. */
export interface IRSignIn {
  /** The origin of `authenticate_service_url`. */
  readonly authenticateUrl: string;
  readonly callbackPath: string;
  readonly cookie: {
    /** Session cookie name (`cookie_name`, default `_portcullis`). */
    readonly name: string;
    readonly domain: string | undefined;
    /** Lifetime of the session and its cookie (`cookie_expire`), ms. */
    readonly expireMs: number;
    readonly httpOnly: boolean;
    /** '' sends no SameSite attribute. */
    readonly sameSite: '' | 'strict' | 'lax' | 'none';
    /** Secure attribute: true except on a plain-HTTP listener (`insecure_server`). */
    readonly secure: boolean;
  };
  readonly programmaticRedirectDomains: readonly string[];
  /** `signout_redirect_url`. */
  readonly signoutRedirectUrl: string | undefined;
  /** Every identity-provider client, sorted by id; each one's secret is in the key ring by id. */
  readonly providers: readonly IRIdentityProvider[];
}

/** One identity-provider client, without its secret. */
export interface IRIdentityProvider {
  /** Stable id; sessions and routes are bound to it (IRRoute.idpId). */
  readonly id: string;
  /** Its name: the key in `identity_providers`, or `default` for the global `idp_*` keys (shown to users). */
  readonly name: string;
  readonly provider: IdpProvider;
  /** Discovery base URL; absent for providers with a fixed one. */
  readonly providerUrl: string | undefined;
  readonly clientId: string;
  /** `idp_scopes`; absent: the provider's defaults. */
  readonly scopes: readonly string[] | undefined;
  readonly requestParams: Readonly<Record<string, string>>;
  readonly trustUnverifiedEmail: boolean;
}
