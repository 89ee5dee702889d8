import { parseHealthCheck } from './parse-health-check.js';
import { parseOutlierDetection } from './parse-outlier-detection.js';
import type { RouteFields } from './route-fields.js';
import { fileErrorText, type ReadText } from './sources.js';
import { LB_POLICIES } from './types.js';
import { certificateProblem, pairProblem, readPrivateKey } from './pem-check.js';
import type { Reader } from './value-readers.js';

/** Load balancing, health checks, outlier detection, the panic threshold and upstream TLS. */
export function readUpstream(
  reader: Reader,
  path: string,
  fields: RouteFields,
  readText: ReadText,
): Record<string, unknown> {
  const { raw, at } = fields;
  const healthChecks =
    raw.health_checks === undefined
      ? []
      : Array.isArray(raw.health_checks)
        ? raw.health_checks.map((check, index) =>
            parseHealthCheck(reader, `${at('health_checks')}[${index}]`, check),
          )
        : [reader.problem(at('health_checks'), 'expected a list of health checks')];
  return {
    load_balancing_policy:
      raw.load_balancing_policy === undefined
        ? 'ROUND_ROBIN'
        : reader.oneOf(at('load_balancing_policy'), raw.load_balancing_policy, LB_POLICIES),
    health_checks: healthChecks,
    outlier_detection:
      raw.outlier_detection === undefined
        ? undefined
        : parseOutlierDetection(reader, at('outlier_detection'), raw.outlier_detection),
    healthy_panic_threshold:
      raw.healthy_panic_threshold === undefined
        ? undefined
        : reader.integer(at('healthy_panic_threshold'), raw.healthy_panic_threshold, 0, 100),
    tls_skip_verify: fields.bool('tls_skip_verify'),
    allow_restricted_upstream: fields.bool('allow_restricted_upstream'),
    tls_server_name: fields.str('tls_server_name'),
    ...readUpstreamTls(reader, path, raw, readText),
  };
}

function readUpstreamTls(
  reader: Reader,
  path: string,
  raw: Record<string, unknown>,
  readText: ReadText,
): Record<string, string | undefined> {
  const given = (inlineKey: string, fileKey: string): string =>
    `${path}.${raw[inlineKey] === undefined ? fileKey : inlineKey}`;
  const pem = (inlineKey: string, fileKey: string, what: PemKind): string | undefined => {
    if (raw[inlineKey] !== undefined && raw[fileKey] !== undefined) {
      return reader.problem(path, `set only one of ${inlineKey} and ${fileKey}`);
    }
    if (raw[inlineKey] !== undefined)
      return decodeBase64Pem(reader, `${path}.${inlineKey}`, raw[inlineKey], what);
    if (raw[fileKey] === undefined) return undefined;
    const file = reader.string(`${path}.${fileKey}`, raw[fileKey]);
    if (file === undefined) return undefined;
    try {
      return requirePem(reader, `${path}.${fileKey}`, readText(file), what);
    } catch (err) {
      return reader.problem(`${path}.${fileKey}`, `cannot read ${file}: ${fileErrorText(err)}`);
    }
  };
  const ca = pem('tls_custom_ca', 'tls_custom_ca_file', 'certificate');
  const cert = pem('tls_client_cert', 'tls_client_cert_file', 'certificate');
  const key = pem('tls_client_key', 'tls_client_key_file', 'private key');
  if ((cert === undefined) !== (key === undefined)) {
    reader.problem(
      path,
      'client certificate key and cert both must be non-empty (tls_client_cert and tls_client_key, or their _file forms)',
    );
  }
  const certName = given('tls_client_cert', 'tls_client_cert_file');
  const mismatch =
    cert === undefined || key === undefined
      ? undefined
      : pairProblem(cert, key, certName.slice(path.length + 1));
  if (mismatch !== undefined) reader.problem(given('tls_client_key', 'tls_client_key_file'), mismatch);
  return { tls_custom_ca_pem: ca, tls_client_cert_pem: cert, tls_client_key_pem: key };
}

type PemKind = 'certificate' | 'private key';

function decodeBase64Pem(reader: Reader, path: string, raw: unknown, what: PemKind): string | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (!/^[A-Za-z0-9+/=\s]+$/.test(text)) return reader.problem(path, 'expected base64-encoded PEM');
  return requirePem(reader, path, Buffer.from(text, 'base64').toString('utf8'), what);
}

/** The PEM text, when it holds a block and its contents parse as `what` (pem-check.ts). */
function requirePem(reader: Reader, path: string, text: string, what: PemKind): string | undefined {
  if (!/-----BEGIN [A-Z ]+-----/.test(text))
    return reader.problem(path, 'does not contain a PEM block (-----BEGIN ...-----)');
  const key = what === 'private key' ? readPrivateKey(text) : undefined;
  const problem =
    what === 'certificate' ? certificateProblem(text) : typeof key === 'string' ? key : undefined;
  return problem === undefined ? text : reader.problem(path, problem);
}
