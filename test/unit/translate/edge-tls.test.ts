// The edge's TLS in translate (edge-tls.ts): the self-signed fallback goes first (Envoy serves the
// first certificate when no SNI matches) and names exactly the served hosts no configured
// certificate covers as Envoy matches (exact, or a one-label wildcard); nothing changes under
// insecure_server or without a generator; an unchanged config gives the same certificates; the
// "no certificate and no insecure_server" error stays; `http_redirect_addr` becomes the IR's
// redirect listener with the HTTPS port; every certificate file is watched (so a replaced one reloads).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import { loadConfigFile } from '../../../src/config/load-file.js';
import { parseConfig } from '../../../src/config/parse-config.js';
import type { Config } from '../../../src/config/types.js';
import { translate } from '../../../src/translate/translate.js';
import { fallbackCertificates, type FallbackCertificate } from '../../../src/pki/fallback-tls.js';
import { HTTP_REDIRECT_LISTENER } from '../../../src/contract/names.js';
import { SIGN_IN } from '../../support/sign-in-config.js';
import { generateTestCertificate } from '../../support/test-certs.js';

const WILDCARD = generateTestCertificate('*.example.com');
const EXACT = generateTestCertificate('exact.test');
const SECRET = new Uint8Array(32).fill(7);

function parse(document: Record<string, unknown>): Config {
  const result = parseConfig({ document: { ...SIGN_IN, ...document }, env: {}, readText: () => '' });
  assert.deepEqual(result.problems, []);
  assert.ok(result.config, 'the config parses');
  return result.config;
}

const route = (from: string): Record<string, unknown> => ({ from, to: 'http://10.0.0.1:8080' });

const TLS_DOCUMENT = {
  address: ':443',
  certificates: [
    { cert: WILDCARD.certPem, key: WILDCARD.keyPem },
    { cert: EXACT.certPem, key: EXACT.keyPem },
  ],
  routes: [
    route('https://a.example.com'), // *.example.com covers it
    route('https://deep.a.example.com'), // a wildcard covers one label only
    route('https://exact.test'),
    route('https://zeta.other.test'),
    route('https://*.wild.test'), // a wildcard host: named as such
    route('https://*.example.com'), // the very wildcard a certificate has
    route('https://app.*'), // no certificate can name it
    route('https://10.1.2.3'), // an IP address: no SNI
  ],
};

/** A generator that records the hosts it was asked for. */
function recording(): { generator: FallbackCertificate; calls: string[][] } {
  const calls: string[][] = [];
  const real = fallbackCertificates(SECRET);
  return {
    calls,
    generator: (hosts) => {
      calls.push([...hosts]);
      return real(hosts);
    },
  };
}

test('the fallback goes first and names the served hosts no configured certificate covers, sorted', () => {
  const { generator, calls } = recording();
  const result = translate(parse(TLS_DOCUMENT), { systemCaFile: '/ca.pem', fallbackCertificate: generator });
  assert.deepEqual(result.problems, []);
  // authenticate.example.com (SIGN_IN's authenticate host) is covered by *.example.com.
  assert.deepEqual(calls, [['*.wild.test', 'deep.a.example.com', 'zeta.other.test']]);
  const certificates = result.ir?.listener.tls?.certificates ?? [];
  assert.equal(certificates.length, 3);
  const first = new X509Certificate(certificates[0]?.certPem ?? '');
  assert.equal(first.subjectAltName, 'DNS:*.wild.test, DNS:deep.a.example.com, DNS:zeta.other.test');
  assert.equal(first.subject, 'CN=Portcullis self-signed fallback');
  assert.equal(certificates[1]?.certPem, WILDCARD.certPem, 'then the configured ones in config order');
  assert.equal(certificates[2]?.certPem, EXACT.certPem);
});

test('an uncovered authenticate host is named too; with every host covered the fallback names none', () => {
  const { generator, calls } = recording();
  const config = parse({
    ...TLS_DOCUMENT,
    authenticate_service_url: 'https://login.elsewhere.test',
    routes: [route('https://a.example.com')],
  });
  translate(config, { systemCaFile: '/ca.pem', fallbackCertificate: generator });
  assert.deepEqual(calls, [['login.elsewhere.test']]);
  const covered = parse({ ...TLS_DOCUMENT, routes: [route('https://exact.test')] });
  const result = translate(covered, { systemCaFile: '/ca.pem', fallbackCertificate: generator });
  assert.deepEqual(calls[1], []);
  const first = new X509Certificate(result.ir?.listener.tls?.certificates[0]?.certPem ?? '');
  assert.equal(first.subjectAltName, undefined, 'no empty SAN extension');
});

test('an unchanged config gives the same listener certificates, byte for byte', () => {
  const options = { systemCaFile: '/ca.pem', fallbackCertificate: fallbackCertificates(SECRET) };
  const a = translate(parse(TLS_DOCUMENT), options).ir?.listener;
  const b = translate(parse(TLS_DOCUMENT), { ...options, fallbackCertificate: fallbackCertificates(SECRET) })
    .ir?.listener;
  assert.ok(a?.tls);
  assert.deepEqual(a, b);
});

test('insecure_server, or no generator, leaves the certificates alone', () => {
  const { generator, calls } = recording();
  const insecure = parse({ insecure_server: true, address: ':8080', routes: [route('https://b.test')] });
  assert.equal(
    translate(insecure, { systemCaFile: '/ca.pem', fallbackCertificate: generator }).ir?.listener.tls,
    undefined,
  );
  assert.deepEqual(calls, []);
  const plain = translate(parse(TLS_DOCUMENT), { systemCaFile: '/ca.pem' }).ir?.listener.tls?.certificates;
  assert.deepEqual(
    plain?.map((pair) => pair.certPem),
    [WILDCARD.certPem, EXACT.certPem],
  );
});

test('no certificate settings and no insecure_server is still a descriptive error', () => {
  const result = parseConfig({
    document: { ...SIGN_IN, routes: [route('https://b.test')] },
    env: {},
    readText: () => '',
  });
  assert.equal(result.config, undefined);
  assert.ok(
    result.problems.some(
      (problem) =>
        /no TLS certificate is configured/.test(problem.message) && /insecure_server/.test(problem.message),
    ),
    JSON.stringify(result.problems),
  );
});

test('http_redirect_addr becomes the redirect listener, naming the HTTPS port and reading PROXY headers as the HTTPS listener does', () => {
  const withRedirect = (address: string, redirect: string, proxyProtocol = false) =>
    translate(
      parse({ ...TLS_DOCUMENT, address, http_redirect_addr: redirect, use_proxy_protocol: proxyProtocol }),
      { systemCaFile: '/ca.pem' },
    ).ir?.httpRedirect;
  assert.deepEqual(withRedirect(':443', ':80'), {
    name: HTTP_REDIRECT_LISTENER,
    host: '0.0.0.0',
    port: 80,
    httpsPort: 443,
    useProxyProtocol: false,
  });
  assert.deepEqual(withRedirect('127.0.0.1:8443', '[::1]:8080', true), {
    name: HTTP_REDIRECT_LISTENER,
    host: '::1',
    port: 8080,
    httpsPort: 8443,
    useProxyProtocol: true,
  });
  assert.equal(translate(parse(TLS_DOCUMENT), { systemCaFile: '/ca.pem' }).ir?.httpRedirect, undefined);
});

test('every certificate file is listed for the file watcher, so replacing one reloads the config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'edge-tls-'));
  try {
    const configPath = join(dir, 'config.yaml');
    writeFileSync(
      configPath,
      stringify({
        ...SIGN_IN,
        certificate_file: WILDCARD.certFile,
        certificate_key_file: WILDCARD.keyFile,
        certificates: [{ cert: EXACT.certFile, key: EXACT.keyFile }],
        routes: [route('https://a.example.com')],
      }),
    );
    const loaded = loadConfigFile(configPath, {});
    assert.deepEqual(loaded.problems, []);
    for (const file of [WILDCARD.certFile, WILDCARD.keyFile, EXACT.certFile, EXACT.keyFile]) {
      assert.ok(loaded.filesRead.includes(file), `${file} is watched`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
