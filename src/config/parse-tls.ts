import type { ParsedValues } from './parsed-values.js';
import { readPem } from './parse-keys.js';
import { pairProblem } from './pem-check.js';
import { fileErrorText, type RawValue, type ReadText } from './sources.js';
import { describe, isPlainObject, type Reader } from './value-readers.js';

/** A listener certificate with its key, both PEM. */
export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

/**
 * The listener certificates from every source, in order: `certificate` + `certificate_key`,
 * `certificate_file` + `certificate_key_file`, then each `certificates[i]` entry. Half a pair is
 * an error naming the missing key; a key that is not its certificate's is an error at the key.
 */
export function readCertificates(
  reader: Reader,
  values: ParsedValues,
  certificatesRaw: RawValue | undefined,
  readText: ReadText,
): CertificatePair[] {
  const out: CertificatePair[] = [];
  const pairs: [string, string][] = [
    ['certificate', 'certificate_key'],
    ['certificate_file', 'certificate_key_file'],
  ];
  for (const [certKey, keyKey] of pairs) {
    const cert = values.get<string>(certKey);
    const key = values.get<string>(keyKey);
    if (values.failed(certKey) || values.failed(keyKey)) continue;
    if (cert === undefined && key === undefined) continue;
    if (cert === undefined || key === undefined) {
      const missing = cert === undefined ? certKey : keyKey;
      reader.problem(missing, `is required together with ${cert === undefined ? keyKey : certKey}`);
      continue;
    }
    const mismatch = pairProblem(cert, key, values.path(certKey));
    if (mismatch === undefined) out.push({ certPem: cert, keyPem: key });
    else reader.problem(values.path(keyKey), mismatch);
  }
  if (certificatesRaw !== undefined) out.push(...readCertificateList(reader, certificatesRaw, readText));
  return out;
}

function readCertificateList(reader: Reader, raw: RawValue, readText: ReadText): CertificatePair[] {
  let list = raw.value;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return reader.problem(raw.path, 'expected a JSON list of {"cert": ..., "key": ...}') ?? [];
    }
  }
  if (!Array.isArray(list))
    return reader.problem(raw.path, `expected a list of {cert, key}, got ${describe(list)}`) ?? [];
  const out: CertificatePair[] = [];
  list.forEach((entry, index) => {
    const at = `${raw.path}[${index}]`;
    if (!isPlainObject(entry)) {
      reader.problem(at, 'expected {cert: <file or PEM>, key: <file or PEM>}');
      return;
    }
    for (const extra of Object.keys(entry).filter((name) => name !== 'cert' && name !== 'key')) {
      reader.problem(`${at}.${extra}`, 'unknown key; a certificate entry has cert and key');
    }
    const cert = pemOrFile(reader, `${at}.cert`, entry.cert, 'certificate', readText);
    const key = pemOrFile(reader, `${at}.key`, entry.key, 'private key', readText);
    if (cert === undefined || key === undefined) return;
    const mismatch = pairProblem(cert, key, `${at}.cert`);
    if (mismatch === undefined) out.push({ certPem: cert, keyPem: key });
    else reader.problem(`${at}.key`, mismatch);
  });
  return out;
}

/** A PEM value given inline (raw or base64) or as the path of a PEM file. */
function pemOrFile(
  reader: Reader,
  path: string,
  raw: unknown,
  what: 'certificate' | 'private key',
  readText: ReadText,
): string | undefined {
  if (raw === undefined || raw === null) return reader.problem(path, 'is required');
  const text = what === 'private key' ? reader.secret(path, raw) : reader.string(path, raw);
  if (text === undefined) return undefined;
  const inline =
    text.includes('-----BEGIN ') ||
    Buffer.from(text.replace(/\s+/g, ''), 'base64').toString('latin1').includes('-----BEGIN ');
  if (inline) return readPem(reader, path, text, what);
  try {
    return readPem(reader, path, readText(text.trim()), what);
  } catch (err) {
    return reader.problem(path, `cannot read ${text.trim()}: ${fileErrorText(err)}`);
  }
}
