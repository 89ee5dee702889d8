import { existsSync } from 'node:fs';

/** Where Linux distributions keep the system CA bundle, most common first. */
const CANDIDATES = [
  '/etc/ssl/certs/ca-certificates.crt',
  '/etc/pki/tls/certs/ca-bundle.crt',
  '/etc/ssl/ca-bundle.pem',
  '/etc/ssl/cert.pem',
];

/**
 * The system trust store Envoy should use for HTTPS upstreams. Envoy verifies nothing unless told
 * which CAs to trust, so this is what makes "system trust by default" true. `SSL_CERT_FILE` wins.
 */
export function systemCaFile(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const fromEnv = env.SSL_CERT_FILE;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return CANDIDATES.find((file) => existsSync(file)) ?? (CANDIDATES[0] as string);
}
