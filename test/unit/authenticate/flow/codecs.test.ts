// The sign-in flow's sealed values on a fake clock: each opens as sealed, expires on time, and a
// tampered, foreign-key or other-purpose value is refused with the reason named (never the contents).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  FlowTokenError,
  HANDOFF_LIFETIME_MS,
  PROGRAMMATIC_LIFETIME_MS,
  SIGN_IN_LIFETIME_MS,
  openFlowCookie,
  openHandoff,
  openProgrammaticRequest,
  openSignInState,
  sealFlowCookie,
  sealHandoff,
  sealProgrammaticRequest,
  sealSignInState,
  signInStateOf,
} from '../../../../src/authenticate/flow/codecs.js';
import { open, seal } from '../../../../src/authenticate/flow/sealed.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const cookieSecret = new Uint8Array(randomBytes(32));
const sharedSecret = new Uint8Array(randomBytes(32));

async function rejects(promise: Promise<unknown>, reason: string): Promise<FlowTokenError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof FlowTokenError, `a FlowTokenError, got ${String(error)}`);
    assert.equal(error.reason, reason);
    return error;
  }
  assert.fail(`expected a ${reason} failure`);
}

const state = {
  flowId: 'flow-1',
  csrf: 'csrf-token',
  target: { kind: 'url' as const, url: 'https://app.example.com:8443/x?y=1' },
  idpId: 'idp-a',
};

test('sign-in state: round trip, and expiry after 10 minutes', async () => {
  const sealed = await sealSignInState(cookieSecret, state, T0);
  const opened = await openSignInState(cookieSecret, sealed, T0 + SIGN_IN_LIFETIME_MS - 1000);
  assert.deepEqual(opened, { ...state, expiresAt: T0 + SIGN_IN_LIFETIME_MS });
  const expired = await rejects(
    openSignInState(cookieSecret, sealed, T0 + SIGN_IN_LIFETIME_MS + 1000),
    'expired',
  );
  assert.ok(expired.expiredPayload !== undefined);
  assert.deepEqual(
    signInStateOf(expired.expiredPayload).target,
    state.target,
    'an expired state still names its URL',
  );
  assert.doesNotMatch(expired.message, /app\.example|csrf/, 'the message carries no contents');
});

test('sign-in state: programmatic target round trip', async () => {
  const request = {
    origin: 'https://app.example.com',
    redirectUri: 'http://localhost:8000/cb',
    idpId: 'idp-a',
  };
  const sealed = await sealSignInState(
    cookieSecret,
    { ...state, target: { kind: 'programmatic', request } },
    T0,
  );
  const opened = await openSignInState(cookieSecret, sealed, T0);
  assert.deepEqual(opened.target, { kind: 'programmatic', request });
});

test('sign-in state: tampered, wrong key, wrong purpose and garbage are refused by name', async () => {
  const sealed = await sealSignInState(cookieSecret, state, T0);
  const parts = sealed.split('.');
  const ciphertext = parts[3] as string;
  const flipped = `${ciphertext[0] === 'A' ? 'B' : 'A'}${ciphertext.slice(1)}`;
  await rejects(
    openSignInState(cookieSecret, [...parts.slice(0, 3), flipped, parts[4]].join('.'), T0),
    'tampered',
  );
  await rejects(openSignInState(new Uint8Array(randomBytes(32)), sealed, T0), 'tampered');
  await rejects(openSignInState(sharedSecret, sealed, T0), 'tampered');
  const cookie = await sealFlowCookie(
    cookieSecret,
    { flowId: 'f', csrf: 'c', codeVerifier: 'v', nonce: 'n' },
    T0,
  );
  await rejects(openSignInState(cookieSecret, cookie, T0), 'wrong-purpose');
  await rejects(openSignInState(cookieSecret, 'not a token', T0), 'malformed');
  await rejects(openSignInState(cookieSecret, '', T0), 'malformed');
});

test('sealed values with missing fields are malformed', async () => {
  const sealed = await seal(
    cookieSecret,
    'sign-in-state',
    { fid: 'f', idp: 'i', url: 'https://a/' },
    T0,
    60_000,
  );
  await rejects(openSignInState(cookieSecret, sealed, T0), 'malformed');
  const wrongType = await seal(
    cookieSecret,
    'flow-cookie',
    { fid: 'f', csrf: 1, pkce: 'v', nonce: 'n' },
    T0,
    60_000,
  );
  await rejects(openFlowCookie(cookieSecret, wrongType, T0), 'malformed');
});

test('flow cookie: round trip and expiry', async () => {
  const value = { flowId: 'flow-1', csrf: 'c', codeVerifier: 'verifier', nonce: 'nonce' };
  const sealed = await sealFlowCookie(cookieSecret, value, T0);
  assert.deepEqual(await openFlowCookie(cookieSecret, sealed, T0 + 1000), value);
  await rejects(openFlowCookie(cookieSecret, sealed, T0 + SIGN_IN_LIFETIME_MS + 1000), 'expired');
});

test('handoff: round trip, 60 s expiry, and the state key does not open it', async () => {
  const value = {
    handle: 'h.mac',
    url: 'https://app.example.com:8443/x',
    programmaticRedirect: undefined,
    jti: 'j1',
  };
  const sealed = await sealHandoff(sharedSecret, value, T0);
  assert.deepEqual(await openHandoff(sharedSecret, sealed, T0 + 59_000), {
    ...value,
    expiresAt: T0 + HANDOFF_LIFETIME_MS,
  });
  await rejects(openHandoff(sharedSecret, sealed, T0 + 61_000), 'expired');
  await rejects(openHandoff(cookieSecret, sealed, T0), 'tampered');
  const programmatic = await sealHandoff(
    sharedSecret,
    { ...value, programmaticRedirect: 'http://localhost:1/cb' },
    T0,
  );
  assert.equal(
    (await openHandoff(sharedSecret, programmatic, T0)).programmaticRedirect,
    'http://localhost:1/cb',
  );
  await rejects(openSignInState(cookieSecret, sealed, T0), 'wrong-purpose');
});

test('programmatic request: round trip; a handoff is not one', async () => {
  const request = {
    origin: 'https://app.example.com',
    redirectUri: 'http://127.0.0.1:9/cb',
    idpId: 'i',
    jti: 'once',
  };
  const sealed = await sealProgrammaticRequest(sharedSecret, request, T0);
  assert.deepEqual(await openProgrammaticRequest(sharedSecret, sealed, T0), {
    ...request,
    expiresAt: T0 + PROGRAMMATIC_LIFETIME_MS,
  });
  const handoff = await sealHandoff(
    sharedSecret,
    { handle: 'h', url: 'https://a/', programmaticRedirect: undefined, jti: 'j' },
    T0,
  );
  await rejects(openProgrammaticRequest(sharedSecret, handoff, T0), 'wrong-purpose');
});

test('open checks the purpose header before the key', async () => {
  const sealed = await seal(sharedSecret, 'handoff', { x: 'y' }, T0, 60_000);
  await rejects(open(sharedSecret, 'programmatic-request', sealed, T0), 'wrong-purpose');
  assert.equal((await open(sharedSecret, 'handoff', sealed, T0)).x, 'y');
});
