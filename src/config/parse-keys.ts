import { createPrivateKey, type KeyObject } from 'node:crypto';
import { certificateProblem, readPrivateKey } from './pem-check.js';
import { Secret } from '../shared/secret.js';
import type { SigningKey } from './types.js';
import type { Reader } from './value-readers.js';

const BASE64 = /^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/;
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * A base64-encoded 32-byte secret (`shared_secret`, `cookie_secret`): standard or URL-safe
 * alphabet, padding optional, surrounding whitespace ignored. Messages give the decoded length
 * at most, never the value.
 */
export function readBytes32(reader: Reader, path: string, raw: unknown): Secret<Buffer> | undefined {
  const text = reader.secret(path, raw)?.trim();
  if (text === undefined) return undefined;
  if (text === '')
    return reader.problem(path, 'is empty; generate one with `head -c32 /dev/urandom | base64`');
  if (/\s/.test(text)) return reader.problem(path, 'contains whitespace; it must be one base64 string');
  if (!BASE64.test(text)) {
    return reader.problem(path, 'is not base64; generate one with `head -c32 /dev/urandom | base64`');
  }
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== 32) {
    return reader.problem(
      path,
      `must be base64 of 32 bytes, got ${bytes.length} bytes; generate one with \`head -c32 /dev/urandom | base64\``,
    );
  }
  return new Secret(bytes);
}

/** Raw PEM text, or base64 of it, as PEM text; undefined when neither. */
function pemText(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed.includes('-----BEGIN ')) return trimmed;
  const compact = trimmed.replace(/\s+/g, '');
  if (!BASE64.test(compact)) return undefined;
  const decoded = Buffer.from(compact, 'base64').toString('utf8');
  return decoded.includes('-----BEGIN ') ? decoded.trim() : undefined;
}

/**
 * A PEM certificate (chain, or CA bundle) or private key, raw or base64-encoded, returned as PEM
 * text ending in one newline. Checks the block type and that the contents parse (pem-check.ts),
 * so what Envoy would refuse is refused here, at its key.
 */
export function readPem(
  reader: Reader,
  path: string,
  raw: unknown,
  what: 'certificate' | 'private key',
): string | undefined {
  const text = what === 'private key' ? reader.secret(path, raw) : reader.string(path, raw);
  if (text === undefined) return undefined;
  if (text.trim() === '') return reader.problem(path, `is empty; give a PEM ${what}`);
  const pem = pemText(text);
  const block = what === 'certificate' ? /-----BEGIN CERTIFICATE-----/ : /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
  if (pem === undefined || !block.test(pem)) {
    const example = what === 'certificate' ? 'CERTIFICATE' : 'PRIVATE KEY';
    return reader.problem(
      path,
      `does not hold a PEM ${what} (-----BEGIN ${example}-----), raw or base64-encoded`,
    );
  }
  const contentProblem = what === 'certificate' ? certificateProblem(pem) : keyProblem(pem);
  return contentProblem === undefined ? `${pem}\n` : reader.problem(path, contentProblem);
}

/**
 * The identity-assertion signing key: PEM (or base64 of PEM) holding one or more private keys;
 * the first signs, all are published for verification. ECDSA keys sign with ES256/384/512 by
 * curve and RSA keys (2048 bits or more) with RS256. Ed25519 is rejected: it was dropped as a
 * signing algorithm and many verifiers do not support it.
 */
export function readSigningKey(reader: Reader, path: string, raw: unknown): SigningKey | undefined {
  const text = reader.secret(path, raw);
  if (text === undefined) return undefined;
  if (text.trim() === '') return reader.problem(path, 'is empty; give a PEM ECDSA or RSA private key');
  const pem = pemText(text);
  const blocks = pem === undefined ? [] : [...pem.matchAll(PEM_BLOCK)].map((match) => match[0]);
  if (blocks.length === 0) {
    return reader.problem(
      path,
      'does not hold a PEM private key (-----BEGIN ... PRIVATE KEY-----), raw or base64-encoded',
    );
  }
  const algorithms = blocks.map((block, index) =>
    keyAlgorithm(reader, blocks.length > 1 ? `${path} (key ${index + 1})` : path, block),
  );
  const first = algorithms[0];
  if (first === undefined || algorithms.includes(undefined)) return undefined;
  return { pem: new Secret(blocks.join('\n')), blocks: new Secret(blocks), algorithm: first };
}

function keyAlgorithm(reader: Reader, path: string, block: string): SigningKey['algorithm'] | undefined {
  if (/-----BEGIN (CERTIFICATE|PUBLIC KEY)/.test(block)) {
    return reader.problem(path, 'holds a certificate or public key; give the private key');
  }
  if (/ENCRYPTED/.test(block))
    return reader.problem(path, 'is an encrypted private key; give it unencrypted');
  let key: KeyObject;
  try {
    key = createPrivateKey(block);
  } catch {
    return reader.problem(path, 'is not a readable PEM private key');
  }
  const type = key.asymmetricKeyType;
  if (type === 'ed25519' || type === 'ed448') {
    return reader.problem(
      path,
      `is an ${type === 'ed25519' ? 'Ed25519' : 'Ed448'} key, which is not supported for signing; use an ECDSA (P-256) or RSA key, e.g. \`openssl ecparam -genkey -name prime256v1 | openssl pkcs8 -topk8 -nocrypt\``,
    );
  }
  if (type === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits >= 2048 ? 'RS256' : reader.problem(path, `is a ${bits}-bit RSA key; use at least 2048 bits`);
  }
  if (type === 'ec') {
    const curves: Record<string, SigningKey['algorithm']> = {
      prime256v1: 'ES256',
      secp384r1: 'ES384',
      secp521r1: 'ES512',
    };
    const curve = key.asymmetricKeyDetails?.namedCurve ?? 'unknown';
    return curves[curve] ?? reader.problem(path, `uses curve ${curve}; use P-256, P-384 or P-521`);
  }
  return reader.problem(path, `is a ${type ?? 'unknown'} key; use an ECDSA or RSA key`);
}

/** Why the private key in `pem` cannot be used, or undefined. */
function keyProblem(pem: string): string | undefined {
  const key = readPrivateKey(pem);
  return typeof key === 'string' ? key : undefined;
}
