// The whole browserless sign-in through the own-endpoint server over loopback HTTP against a real
// OpenID Connect provider (oidc-provider, test/support/test-idp.ts), without Envoy: sign_in ->
// the IdP's login form (completeLogin) -> callback -> handoff -> the route host's cookie and a
// session in the store; and the ways it must refuse (replayed state, CSRF mismatch, the IdP's
// error parameter, a spoiled ID token), plus programmatic login to a localhost redirect.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { parseSetCookie } from 'cookie';
import { createOwnServer } from '../../../../src/authenticate/http/server.js';
import type { HandlerContext } from '../../../../src/authenticate/http/types.js';
import { resolveOptions } from '../../../../src/authenticate/providers/common.js';
import { OidcProviderClient } from '../../../../src/authenticate/providers/oidc.js';
import { completeLogin } from '../../../support/idp-login.js';
import { startTestIdp, type TestIdp } from '../../../support/test-idp.js';
import { AUTH_URL, CALLBACK_PATH, IDP_A, harness, type Harness } from './harness.js';

const ORIGINAL = 'https://app.test:8443/docs?page=2';

interface Answer {
  readonly status: number;
  readonly location: URL | undefined;
  readonly cookies: Map<string, string>;
  readonly body: string;
}

let idp: TestIdp;
let h: Harness;
let port: number;
let close: () => Promise<void>;

before(async () => {
  idp = await startTestIdp({
    clients: [
      {
        clientId: 'portcullis',
        clientSecret: 'portcullis-secret',
        redirectUris: [`${AUTH_URL}${CALLBACK_PATH}`],
      },
    ],
  });
  h = harness();
  h.clock.now = Date.now();
  const provider = new OidcProviderClient(
    {
      id: IDP_A,
      provider: 'oidc',
      providerUrl: new URL(idp.issuer),
      clientId: 'portcullis',
      clientSecret: 'portcullis-secret',
      scopes: undefined,
      requestParams: {},
    },
    resolveOptions({ allowInsecureRequests: true, timeoutMs: 5_000 }),
  );
  const context: HandlerContext = { ...h.context, provider: (id) => (id === IDP_A ? provider : undefined) };
  const server = createOwnServer(context);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
});

after(async () => {
  await close();
  await idp.close();
});

/** One GET to the own server as Envoy would forward it (Host as the browser sent it, https). */
function get(url: URL | string, cookies: Record<string, string> = {}): Promise<Answer> {
  const target = new URL(url);
  const cookie = Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: `${target.pathname}${target.search}`,
        setHost: false,
        headers: { host: target.host, 'x-forwarded-proto': 'https', ...(cookie === '' ? {} : { cookie }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const set = new Map(
            (res.headers['set-cookie'] ?? []).map((v) => [
              parseSetCookie(v).name,
              parseSetCookie(v).value ?? '',
            ]),
          );
          const location = res.headers.location;
          resolve({
            status: res.statusCode ?? 0,
            location: location === undefined ? undefined : new URL(location, target),
            cookies: set,
            body: Buffer.concat(chunks).toString(),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

interface Flow {
  readonly idpUrl: URL;
  readonly cookieName: string;
  readonly cookieValue: string;
}

async function startFlow(signInUrl: string): Promise<Flow> {
  const started = await get(signInUrl);
  assert.equal(started.status, 302, started.body);
  assert.ok(started.location !== undefined);
  assert.equal(started.location.origin, idp.issuer);
  const [entry] = [...started.cookies];
  assert.ok(entry !== undefined);
  return { idpUrl: started.location, cookieName: entry[0], cookieValue: entry[1] };
}

const signInUrl = (original: string): string =>
  `${AUTH_URL}/.portcullis/sign_in?portcullis_redirect_uri=${encodeURIComponent(original)}`;

test('sign in at the IdP, land on the original URL with a cookie naming a stored session', async () => {
  const grantsBefore = idp.counts().grants.authorization_code ?? 0;
  const flow = await startFlow(signInUrl(ORIGINAL));
  const callback = await completeLogin(flow.idpUrl, idp.user.username, idp.user.password);
  assert.equal(`${callback.origin}${callback.pathname}`, `${AUTH_URL}${CALLBACK_PATH}`);
  const answered = await get(callback, { [flow.cookieName]: flow.cookieValue });
  assert.equal(answered.status, 302, answered.body);
  assert.equal(answered.location?.origin, 'https://app.test:8443');
  const landed = await get(answered.location ?? '');
  assert.equal(landed.status, 302, landed.body);
  assert.equal(landed.location?.href, ORIGINAL);
  const handle = landed.cookies.get('_portcullis') ?? '';
  const sessionId = h.handles.verify(handle);
  assert.ok(sessionId !== undefined);
  const session = await h.sessions.get(sessionId);
  assert.equal(session?.userId, 'alice');
  assert.equal(session?.email, 'alice@example.com');
  assert.deepEqual(session?.groups, ['admins', 'staff']);
  assert.equal(session?.idpId, IDP_A);
  assert.equal((idp.counts().grants.authorization_code ?? 0) - grantsBefore, 1);

  const replay = await get(callback, { [flow.cookieName]: flow.cookieValue });
  assert.equal(replay.status, 400, 'a replayed state is refused');
  assert.equal((idp.counts().grants.authorization_code ?? 0) - grantsBefore, 1, 'without asking the IdP');
  assert.equal((await get(answered.location ?? '')).status, 400, 'a replayed handoff is refused');
});

test("a callback carrying another flow's cookie is refused (CSRF), and makes no session", async () => {
  const mine = await startFlow(signInUrl(ORIGINAL));
  const theirs = await startFlow(signInUrl(ORIGINAL));
  const callback = await completeLogin(mine.idpUrl, idp.user.username, idp.user.password);
  const answered = await get(callback, { [mine.cookieName]: theirs.cookieValue });
  assert.equal(answered.status, 400);
  assert.match(answered.body, /CSRF/);
  assert.ok(!answered.cookies.has('_portcullis'));
});

test("the IdP's error parameter is a clear page and no session", async () => {
  const flow = await startFlow(signInUrl(ORIGINAL));
  const callback = new URL(`${AUTH_URL}${CALLBACK_PATH}`);
  callback.searchParams.set('state', flow.idpUrl.searchParams.get('state') ?? '');
  callback.searchParams.set('error', 'access_denied');
  callback.searchParams.set('error_description', 'the user said no');
  const answered = await get(callback, { [flow.cookieName]: flow.cookieValue });
  assert.equal(answered.status, 401);
  assert.match(answered.body, /access_denied: the user said no/);
  assert.ok(!answered.cookies.has('_portcullis'));
});

test('an ID token from the wrong issuer is refused at the callback: 401, no session', async () => {
  const flow = await startFlow(signInUrl(ORIGINAL));
  const callback = await completeLogin(flow.idpUrl, idp.user.username, idp.user.password);
  idp.tamperIdTokens('wrong-issuer');
  try {
    const answered = await get(callback, { [flow.cookieName]: flow.cookieValue });
    assert.equal(answered.status, 401, answered.body);
    assert.ok(!answered.cookies.has('_portcullis'));
  } finally {
    idp.tamperIdTokens('none');
  }
});

test('programmatic login to a localhost redirect yields a working token; other hosts are refused', async () => {
  const login = await get(
    'https://app.test/.portcullis/api/v1/login?portcullis_redirect_uri=http://localhost:8000/cb',
  );
  assert.equal(login.status, 200, login.body);
  const flow = await startFlow(login.body.trim());
  const callback = await completeLogin(flow.idpUrl, idp.user.username, idp.user.password);
  const answered = await get(callback, { [flow.cookieName]: flow.cookieValue });
  assert.equal(answered.status, 302, answered.body);
  const landed = await get(answered.location ?? '');
  assert.equal(landed.status, 302, landed.body);
  assert.equal(landed.location?.origin, 'http://localhost:8000');
  const token = landed.location?.searchParams.get('portcullis_jwt') ?? '';
  assert.ok(h.handles.verify(token) !== undefined, 'the token is a session handle');
  const refused = await get(
    'https://app.test/.portcullis/api/v1/login?portcullis_redirect_uri=https://evil.test/cb',
  );
  assert.equal(refused.status, 400);
  assert.match(refused.body, /evil\.test/);
});
