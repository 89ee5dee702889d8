/**
 * The server names Envoy selects a certificate by: the DNS subjectAltNames of the first
 * certificate of a PEM chain, or its subject common name when it has none; lower-cased, as written
 * (`*.example.com` stays a wildcard). One reading for translate (which certificate serves which
 * host) and the Kubernetes source (host ownership), parsed with pkijs over node:crypto's DER.
 */
import { X509Certificate } from 'node:crypto';
import * as pkijs from 'pkijs';

/** subjectAltName and commonName. */
const SAN_OID = '2.5.29.17';
const CN_OID = '2.5.4.3';

/** The names of `certPem` (see the module comment); throws when it holds no certificate. */
export function certificateNames(certPem: string): string[] {
  const cert = pkijs.Certificate.fromBER(new X509Certificate(certPem).raw);
  const san = cert.extensions?.find((ext) => ext.extnID === SAN_OID)?.parsedValue as
    | pkijs.AltName
    | undefined;
  const dns = (san?.altNames ?? [])
    .filter((name) => name.type === 2)
    .map((name) => String(name.value).toLowerCase());
  if (dns.length > 0) return dns;
  return cert.subject.typesAndValues
    .filter((attribute) => attribute.type === CN_OID)
    .map((attribute) => String(attribute.value.valueBlock.value).toLowerCase());
}
