// Signing-key rotation through the real Envoy: `signing_key` holding two keys publishes both in
// the JWKS every route host serves, assertions are signed by the first, and a reload that drops
// the old key stops publishing it (the way operators rotate without breaking upstreams that cache
// the JWKS). Keys are made at test time.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { loadSigningKey } from '../../src/keys/signing-key.js';
import { adaSession, proxyRequest, startPortcullis, type TestPortcullis } from '../support/portcullis.js';
import { startEchoUpstream, type EchoResponse, type EchoUpstream } from '../support/upstreams.js';
import { waitFor } from '../support/wait.js';

const HOST = 'rotate.test';
const ada = adaSession();
const pemOf = (): string =>
  generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
const [NEXT, CURRENT] = [pemOf(), pemOf()];

let upstream: EchoUpstream;
let portcullis: TestPortcullis;

const config = (signingKey: string): Record<string, unknown> => ({
  signing_key: signingKey,
  routes: [
    {
      from: `https://${HOST}`,
      to: upstream.url,
      allowed_users: ['ada@example.com'],
      pass_identity_headers: true,
    },
  ],
});

before(async () => {
  upstream = await startEchoUpstream({ id: 'rotate' });
  portcullis = await startPortcullis(config(`${NEXT}${CURRENT}`));
  await portcullis.running.sessions.put(ada);
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

async function jwks(): Promise<JSONWebKeySet> {
  const response = await proxyRequest(portcullis.proxyPort, HOST, '/.well-known/portcullis/jwks.json');
  assert.equal(response.status, 200);
  return response.json<JSONWebKeySet>();
}

async function assertion(): Promise<string> {
  const handle = portcullis.running.authorize.handles().issue(ada.id);
  const response = await proxyRequest(portcullis.proxyPort, HOST, '/', {
    headers: { cookie: `_portcullis=${handle}` },
  });
  assert.equal(response.status, 200, response.body);
  const token = response.json<EchoResponse>().headers['x-portcullis-jwt-assertion'];
  assert.equal(typeof token, 'string');
  return token as string;
}

describe('signing-key rotation', () => {
  test('both keys are published, the first signs, and the assertion verifies against the served JWKS', async () => {
    const published = await jwks();
    assert.deepEqual(
      published.keys.map((key) => key.kid),
      [loadSigningKey(NEXT).kid, loadSigningKey(CURRENT).kid],
    );
    const token = await assertion();
    assert.equal(decodeProtectedHeader(token).kid, loadSigningKey(NEXT).kid);
    await jwtVerify(token, createLocalJWKSet(published), { audience: HOST });
  });

  test('a reload without the old key stops publishing it', async () => {
    portcullis.writeConfig(config(NEXT));
    await waitFor(async () => (await jwks()).keys.length === 1, {
      what: 'the JWKS to drop the old key',
      timeoutMs: 15_000,
    });
    assert.deepEqual(
      (await jwks()).keys.map((key) => key.kid),
      [loadSigningKey(NEXT).kid],
    );
    await jwtVerify(await assertion(), createLocalJWKSet(await jwks()), { audience: HOST });
  });
});
