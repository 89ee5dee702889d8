import type { Config } from '../config/types.js';
import type { IRInternal } from '../ir/types.js';
import { serviceTarget, splitHostPort } from '../shared/address.js';
import type { InternalTlsPeer } from '../contract/internal-tls.js';

/**
 * Bound on one ext_authz Check when `authorize_timeout` is 0: a Check answers in well under a
 * millisecond, so a second means the authorizer stalled, and the request gets 503 at once rather
 * than holding a connection for the stall.
 */
const DEFAULT_AUTHORIZE_TIMEOUT_MS = 1000;

/** A host and port Envoy dials. */
export interface EnvoyTarget {
  readonly host: string;
  readonly port: number;
}

/**
 * Where Envoy reaches Portcullis for `config`: ext_authz at `authorize_internal_service_url` when
 * set (a sidecar Envoy in another container), else at `authorize_service_url` when authorize runs
 * elsewhere, else at this process's gRPC listener; the authenticate service's HTTP endpoints
 * at `ownHttp` (this process's HTTP server), or at `authenticate_internal_service_url` when set
 * (a split authenticate, or a sidecar Envoy in another container); the TLS Envoy verifies each
 * with (peerTls); the Check timeout, the JWKS to publish and the decision key's JWKS. (The credential ext_authz presents
 * is not here: it lives in Envoy's bootstrap, contract/grpc-credential.ts.)
 * Listeners on every interface become loopback.
 * The build and the dry run both use it (from-file.ts), so `portcullis compile` prints what Envoy receives.
 */
export function internalEndpoints(
  config: Config,
  endpoints: {
    readonly jwksJson: string;
    /** The decision key's public JWKS (`IRInternal.decisionJwksJson`). */
    readonly decisionJwksJson: string;
    readonly ownHttp: EnvoyTarget;
    /** The derived CA and name (`tls_derive`): Envoy dials both services over TLS that trusts only it. */
    readonly tls?: InternalTlsPeer;
  },
): IRInternal {
  const authorizeUrl = config.authorize_internal_service_url ?? config.authorize_service_url;
  const authorize =
    authorizeUrl === undefined ? splitHostPort(config.grpc_address) : serviceTarget(authorizeUrl);
  const http =
    config.authenticate_internal_service_url === undefined
      ? endpoints.ownHttp
      : serviceTarget(config.authenticate_internal_service_url);
  return {
    http: { ...dialable(http), ...peerTls(config, endpoints.tls, config.authenticate_internal_service_url) },
    authorize: { ...dialable(authorize), ...peerTls(config, endpoints.tls, authorizeUrl) },
    authorizeTimeoutMs:
      config.authorize_timeout_ms > 0 ? config.authorize_timeout_ms : DEFAULT_AUTHORIZE_TIMEOUT_MS,
    jwksJson: endpoints.jwksJson,
    decisionJwksJson: endpoints.decisionJwksJson,
  };
}

/**
 * How Envoy verifies the service it dials at `url` (undefined: this process's own listener): the
 * derived CA and name when `tls_derive` is set; without it, for an `https://` URL,
 * `certificate_authority` and the URL's host (a DNS name, as validation requires), which is both
 * the SNI and the DNS SAN checked; nothing (plain text) otherwise.
 */
function peerTls(
  config: Config,
  derived: InternalTlsPeer | undefined,
  url: URL | undefined,
): { tls?: InternalTlsPeer } {
  if (derived !== undefined) return { tls: derived };
  const caPem = config.certificate_authority_pem;
  if (url?.protocol !== 'https:' || caPem === undefined) return {};
  return { tls: { caPem, serverName: url.hostname } };
}

/** The address Envoy dials for a listener of Portcullis's: all interfaces become loopback. */
function dialable<T extends EnvoyTarget>(address: T): T {
  return address.host === '0.0.0.0' || address.host === '' || address.host === '::'
    ? { ...address, host: address.host === '::' ? '::1' : '127.0.0.1' }
    : address;
}
