// A stalled authorizer fails fast through a real Envoy (issue 23, item 6): with the session store's
// lookup never answering, a protected request gets 503 in about `authorize_timeout` (default 1 s),
// not after the old 10 s, and a public route on the same Envoy keeps answering 200 meanwhile.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { proxyRequest, startPortcullis, type TestPortcullis, adaSession } from '../support/portcullis.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstreams.js';

let upstream: EchoUpstream;
let portcullis: TestPortcullis;

const ada = adaSession({ claims: {} });

before(async () => {
  upstream = await startEchoUpstream({ id: 'up' });
  // No authorize_timeout in the config: the default is what is tested.
  portcullis = await startPortcullis({
    routes: [
      { from: 'https://protected.test', to: upstream.url, allowed_users: ['ada@example.com'] },
      { from: 'https://public.test', to: upstream.url, allow_public_unauthenticated_access: true },
    ],
  });
  await portcullis.running.sessions.put(ada);
});

after(async () => {
  await portcullis?.stop();
  await upstream?.stop();
});

/** Makes every session lookup of `store` hang until the returned function is called. */
function stallSessions(store: TestPortcullis['running']['sessions']): () => void {
  const getSync = store.getSync.bind(store);
  const get = store.get.bind(store);
  const stalled: (() => void)[] = [];
  const never = (): Promise<undefined> => new Promise((resolve) => stalled.push(() => resolve(undefined)));
  // The authorizer prefers getSync when the store has one: take both away.
  Object.assign(store, { getSync: undefined, get: never });
  return () => {
    Object.assign(store, { getSync, get });
    for (const release of stalled) release();
  };
}

async function timed(
  host: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  const response = await proxyRequest(portcullis.proxyPort, host, '/', { headers });
  return { status: response.status, ms: performance.now() - start };
}

test('a stalled authorizer answers protected requests 503 within the timeout; public routes keep serving', async () => {
  const cookie = `_portcullis=${portcullis.running.authorize.handles().issue(ada.id)}`;
  assert.equal((await timed('protected.test', { cookie })).status, 200, 'allowed before the stall');
  const release = stallSessions(portcullis.running.sessions);
  try {
    const protectedRequests = Array.from({ length: 3 }, () => timed('protected.test', { cookie }));
    // While the Checks hang, the public route answers at once: it never calls ext_authz.
    const publicWhileStalled = await timed('public.test');
    assert.equal(publicWhileStalled.status, 200);
    assert.ok(publicWhileStalled.ms < 500, `public route took ${publicWhileStalled.ms} ms`);
    for (const { status, ms } of await Promise.all(protectedRequests)) {
      assert.equal(status, 503, 'a stalled Check fails closed');
      assert.ok(ms >= 900, `503 came before the 1 s timeout (${ms} ms): something else answered`);
      assert.ok(ms < 2500, `503 took ${ms} ms, past the 1 s default timeout`);
    }
  } finally {
    release();
  }
  assert.equal((await timed('protected.test', { cookie })).status, 200, 'allowed again after the stall');
});
