// Signing keys and identity assertions: each accepted key kind signs assertions that verify
// against the published JWKS with jose; Ed25519 and weak keys are refused; the key derived from
// shared_secret is the same in every replica.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, jwtVerify, decodeProtectedHeader } from 'jose';
import { deriveSigningKey, jwksOf, loadSigningKey } from '../../../src/keys/signing-key.js';
import {
  assertionClaims,
  signAssertion,
  ASSERTION_LIFETIME_S,
} from '../../../src/authorize/identity/assertion.js';
import { assertionHost, assertionTarget, hostnameOf } from '../../../src/authorize/request-host.js';
import type { Session } from '../../../src/session/session.js';

const H = { issuer: 'h', audience: 'h' };

const session: Session = {
  id: 'session-1',
  userId: 'user-1',
  email: 'ada@example.com',
  emailVerified: true,
  name: 'Ada',
  groups: ['admins'],
  claims: { department: 'eng', groups: ['admins'] },
  issuedAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  idpId: 'idp-test',
};

function pem(type: 'ec' | 'rsa' | 'ed25519', options: Record<string, unknown> = {}): string {
  const { privateKey } = generateKeyPairSync(type as 'ec', options as { namedCurve: string });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

const accepted = [
  { name: 'EC P-256', pem: () => pem('ec', { namedCurve: 'prime256v1' }), alg: 'ES256' },
  { name: 'EC P-384', pem: () => pem('ec', { namedCurve: 'secp384r1' }), alg: 'ES384' },
  { name: 'RSA 2048', pem: () => pem('rsa', { modulusLength: 2048 }), alg: 'RS256' },
];

for (const kind of accepted) {
  test(`${kind.name} signs assertions that verify against the JWKS`, async () => {
    const key = loadSigningKey(kind.pem());
    assert.equal(key.alg, kind.alg);
    const now = Date.UTC(2026, 10, 22);
    const token = await signAssertion(
      key,
      assertionClaims(session, assertionTarget('app.example.com:8443', 'https', 'host_only'), now, [
        'department',
      ]),
    );
    assert.equal(decodeProtectedHeader(token).kid, key.kid);
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwksOf([key])), {
      issuer: 'app.example.com:8443',
      audience: 'app.example.com:8443',
      currentDate: new Date(now),
    });
    assert.equal(payload.sub, 'user-1');
    assert.equal(payload.email, 'ada@example.com');
    assert.deepEqual(payload.groups, ['admins']);
    assert.equal(payload.department, 'eng');
    assert.equal(payload.sid, 'session-1');
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), ASSERTION_LIFETIME_S);
  });
}

test('Ed25519, small RSA and non-keys are refused with a message naming signing_key', () => {
  assert.throws(() => loadSigningKey(pem('ed25519')), /signing_key: Ed25519 keys are not supported/);
  assert.throws(() => loadSigningKey(pem('rsa', { modulusLength: 1024 })), /signing_key: unsupported key/);
  assert.throws(() => loadSigningKey('not a key'), /signing_key: not a PEM private key/);
});

test('the key derived from shared_secret is stable across replicas and differs per secret', async () => {
  const secret = randomBytes(32);
  const a = deriveSigningKey(secret);
  const b = deriveSigningKey(Buffer.from(secret));
  const other = deriveSigningKey(randomBytes(32));
  assert.equal(a.alg, 'ES256');
  assert.equal(a.kid, b.kid);
  assert.notEqual(a.kid, other.kid);
  const token = await signAssertion(a, assertionClaims(session, H, Date.now()));
  await jwtVerify(token, createLocalJWKSet(jwksOf([b])));
});

test('groups is always an array, even when the session has none', () => {
  const claims = assertionClaims({ ...session, groups: [] }, H, 0);
  assert.deepEqual(claims.groups, []);
});

test('email_verified says whether the address counts: an upstream must not trust an unverified one', () => {
  assert.equal(assertionClaims({ ...session, emailVerified: true }, H, 0).email_verified, true);
  assert.equal(assertionClaims({ ...session, emailVerified: false }, H, 0).email_verified, false);
  assert.equal(assertionClaims({ ...session, emailVerified: undefined }, H, 0).email_verified, false);
  assert.equal(
    assertionClaims({ ...session, email: undefined, emailVerified: true }, H, 0).email_verified,
    false,
    'no address: nothing verified',
  );
});

test('kid is the RFC 7638 thumbprint jose computes', async () => {
  for (const kind of accepted) {
    const key = loadSigningKey(kind.pem());
    assert.equal(key.kid, await calculateJwkThumbprint(key.publicJwk, 'sha256'));
  }
});

test('jwt_groups_filter keeps only the listed groups in the assertion', () => {
  const claims = assertionClaims(
    { ...session, groups: ['admins', 'eng', 'all-staff'] },
    H,
    0,
    [],
    new Set(['eng', 'ops']),
  );
  assert.deepEqual(claims.groups, ['eng']);
});

test('iss and aud are the request host with a non-default port; jwt_issuer_format uri makes iss a URL', () => {
  assert.deepEqual(assertionTarget('App.Example.com:8443', 'https', 'host_only'), {
    issuer: 'app.example.com:8443',
    audience: 'app.example.com:8443',
  });
  assert.deepEqual(assertionTarget('app.example.com:8443', 'http', 'uri'), {
    issuer: 'http://app.example.com:8443/',
    audience: 'app.example.com:8443',
  });
  assert.deepEqual(assertionTarget('app.example.com', '', 'uri'), {
    issuer: 'https://app.example.com/',
    audience: 'app.example.com',
  });
  // The scheme's default port is not part of the host the assertion names.
  assert.equal(assertionHost('app.example.com:443', 'https'), 'app.example.com');
  assert.equal(assertionHost('app.example.com:80', 'http'), 'app.example.com');
  assert.equal(assertionHost('app.example.com:80', 'https'), 'app.example.com:80');
  const claims = assertionClaims(session, assertionTarget('app.test:8443', 'https', 'uri'), 0);
  assert.equal(claims.iss, 'https://app.test:8443/');
  assert.equal(claims.aud, 'app.test:8443');
});

test('hostnameOf drops the port and lower-cases; an IPv6 literal keeps its brackets', () => {
  assert.equal(hostnameOf('Auth.Example.com:8443'), 'auth.example.com');
  assert.equal(hostnameOf('auth.example.com'), 'auth.example.com');
  assert.equal(hostnameOf('[::1]:8443'), '[::1]');
  assert.equal(hostnameOf('[::1]'), '[::1]');
});
