import { generateKeyPairSync, randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { parseConfig, type ParseResult } from '../../../src/config/parse-config.js';
import type { Config } from '../../../src/config/types.js';
import { formatProblem, type Problem } from '../../../src/shared/errors.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { generateTestCertificate } from '../../support/test-certs.js';

/** A valid 32-byte secret, base64. */
export const SECRET_32 = randomBytes(32).toString('base64');

/** A P-256 private key as PKCS#8 PEM. */
export const EC_KEY_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

/** The smallest valid document: plain HTTP, sign-in (SIGN_IN), one route that needs a user. */
export function base(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    insecure_server: true,
    address: ':8080',
    ...SIGN_IN,
    routes: [{ from: 'https://app.example.com', to: 'http://10.0.0.1:8080' }],
    ...extra,
  };
}

/** Parses `document` with `env`; `files` are what readText finds (anything else is ENOENT). */
export function parse(
  document: unknown,
  env: Record<string, string> = {},
  files: Record<string, string> = {},
): ParseResult {
  return parseConfig({
    document,
    env,
    readText: (path) => {
      const text = files[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return text;
    },
  });
}

/** Parses and asserts success, returning the Config. */
export function valid(
  document: unknown,
  env: Record<string, string> = {},
  files: Record<string, string> = {},
): Config {
  const result = parse(document, env, files);
  assert.deepEqual(result.problems.map(formatProblem), [], 'expected a valid config');
  assert.ok(result.config);
  return result.config;
}

/** Parses and returns the problems as `path: message` lines (asserting there is at least one). */
export function problems(
  document: unknown,
  env: Record<string, string> = {},
  files: Record<string, string> = {},
): string[] {
  const result = parse(document, env, files);
  assert.equal(result.config, undefined, 'expected problems');
  return result.problems.map(formatProblem);
}

/** Asserts one problem is at `path` and its message includes `text`. */
export function assertProblem(
  list: readonly Problem[] | readonly string[],
  path: string,
  text: string,
): void {
  const lines = list.map((item) => (typeof item === 'string' ? item : formatProblem(item)));
  const found = lines.some((line) => line.startsWith(path === '' ? '' : `${path}: `) && line.includes(text));
  assert.ok(found, `no problem at ${path} containing "${text}" in:\n${lines.join('\n')}`);
}

/** A 2048-bit RSA private key as PKCS#8 PEM. */
export const RSA_KEY_PEM = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

/** A certificate and its key made for this run: parsing checks that they parse and match. */
export const TEST_CERT = generateTestCertificate('config.test');
export const CERT_PEM = TEST_CERT.certPem;
export const KEY_PEM = TEST_CERT.keyPem;

/** Base64 of a string. */
export function b64(text: string): string {
  return Buffer.from(text).toString('base64');
}
