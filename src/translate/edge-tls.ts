/**
 * The edge's TLS decisions: which certificates the user-facing listener serves (the configured
 * ones, behind a self-signed fallback for every name they do not cover), and the plain-HTTP
 * listener of `http_redirect_addr` that sends every request to HTTPS.
 *
 * Envoy picks a certificate of one DownstreamTlsContext by the client's SNI against each
 * certificate's DNS SANs (its subject CN when it has none): an exact name first, then a wildcard
 * one label deep (`*.example.com`); with no match, or no SNI at all, it serves the FIRST
 * certificate (arch_overview/security/ssl, "Certificate selection"; full_scan_certs_on_sni_mismatch
 * stays off). So the fallback goes first, and names only hosts no configured certificate covers:
 * for a name both covered, Envoy would take the first loaded, the fallback.
 */
import { isIP } from 'node:net';
import type { Config } from '../config/types.js';
import type { IRHttpRedirect } from '../ir/types.js';
import { HTTP_REDIRECT_LISTENER } from '../contract/names.js';
import { certificateNames } from '../shared/certificate-names.js';
import type { CertificatePair, FallbackCertificate } from '../pki/fallback-tls.js';

/** A DNS name as a certificate can carry it: lower-case labels, optionally one leading `*.` label. */
const SAN_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/**
 * The user-facing listener's certificates, in the order Envoy gets them: with `fallback`, first
 * the fallback for every served host (route `from` hosts and the authenticate host) that no
 * configured certificate covers as Envoy matches, then the configured ones in config order.
 * Without `fallback` (tests of other seams), the configured ones alone. Hosts a certificate cannot
 * name (IP addresses, `app.*` and inner wildcards) are left out of the fallback's names; Envoy
 * still serves it to them, as to any other name, being first.
 */
export function listenerCertificates(
  config: Pick<Config, 'routes' | 'authenticate_service_url' | 'certificates'>,
  fallback: FallbackCertificate | undefined,
): CertificatePair[] {
  const configured = config.certificates.map(({ certPem, keyPem }) => ({ certPem, keyPem }));
  if (fallback === undefined) return configured;
  const covered = new Set(config.certificates.flatMap(({ certPem }) => certificateNames(certPem)));
  const hosts = new Set(config.routes.map((route) => route.from_host));
  if (config.authenticate_service_url !== undefined) hosts.add(config.authenticate_service_url.hostname);
  const uncovered = [...hosts]
    .map((host) => host.toLowerCase())
    .filter((host) => SAN_NAME.test(host) && isIP(host) === 0 && !isCovered(host, covered))
    .sort();
  return [fallback(uncovered), ...configured];
}

/**
 * True when Envoy would serve a certificate with one of `names` for SNI `host`: the exact name, or
 * (for a host without a wildcard) the wildcard of its first label. A wildcard host is covered only
 * by that very wildcard.
 */
function isCovered(host: string, names: ReadonlySet<string>): boolean {
  if (names.has(host)) return true;
  const dot = host.indexOf('.');
  return !host.startsWith('*') && dot > 0 && names.has(`*${host.slice(dot)}`);
}

/**
 * The IR's redirect listener for `http_redirect_addr` (`listenAddress`): where it listens, and the
 * port the redirects name, that of `address` (`httpsAddress`; left out of the URL when 443), and
 * whether its connections carry a PROXY header like the HTTPS listener's (`use_proxy_protocol`).
 */
export function httpRedirect(
  listenAddress: string,
  httpsAddress: string,
  useProxyProtocol: boolean,
): IRHttpRedirect {
  const listen = splitAddress(listenAddress);
  return {
    name: HTTP_REDIRECT_LISTENER,
    host: listen.host,
    port: listen.port,
    httpsPort: splitAddress(httpsAddress).port,
    useProxyProtocol,
  };
}

/** `host:port` (host optional, IPv6 in brackets) -> host (`0.0.0.0` when empty) and port. */
function splitAddress(address: string): { host: string; port: number } {
  const separator = address.lastIndexOf(':');
  const host = address.slice(0, separator).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(address.slice(separator + 1)) };
}
