/**
 * Browserless sign-in through the real parts: Portcullis all-in-one with its real Envoy on a
 * plain-HTTP loopback listener, an echo upstream, and the test IdP (oidc-provider). A client
 * (`EnvoyClient`) follows Portcullis's redirects by hand with a cookie jar, sending every request to
 * Envoy's listener with the URL's host as the Host header (Node does not resolve `*.localhost`);
 * the IdP's login form is filled by `completeLogin`. For the sign-in failure and refresh tests.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { HANDOFF_PATH, SIGN_IN_PATH, REDIRECT_URI_PARAM } from '../../src/contract/endpoints.js';
import { SessionHandles } from '../../src/session/handle.js';
import { CookieJar, completeLogin } from './idp-login.js';
import { startPortcullis, type TestPortcullis } from './portcullis.js';
import { startTestIdp, type TestIdp, type TestIdpOptions } from './test-idp.js';
import { startEchoUpstream, type EchoUpstream } from './upstreams.js';
import { waitFor } from './wait.js';

/** The session cookie's name (the default `cookie_name`). */
export const SESSION_COOKIE = '_portcullis';

const CLIENT = { clientId: 'portcullis-envoy-test', clientSecret: 'envoy-test-secret' };

/** One answer from Envoy's listener. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** The Set-Cookie values, as sent. */
  readonly setCookies: readonly string[];
}

/**
 * A cookie-keeping HTTP client of Envoy's listener on 127.0.0.1:`port`: `get(url)` sends the
 * URL's path and query with its host (and port) as the Host header and the jar's cookies for that
 * host, and records the answer's Set-Cookie values. Redirects are not followed. 10 s per request.
 */
export class EnvoyClient {
  readonly jar = new CookieJar();

  /** `address`: the listener's IP (127.0.0.1 unless a test runs Envoys on other loopback addresses). */
  constructor(
    private readonly port: number,
    private readonly address = '127.0.0.1',
  ) {}

  get(target: URL | string, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send('GET', target, headers, undefined);
  }

  /** POSTs `form` (urlencoded) to `target`, with the jar's cookies, like `get`. */
  post(target: URL | string, form: URLSearchParams, headers: Record<string, string> = {}): Promise<Answer> {
    return this.send(
      'POST',
      target,
      { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      form,
    );
  }

  private send(
    method: string,
    target: URL | string,
    headers: Record<string, string>,
    form: URLSearchParams | undefined,
  ): Promise<Answer> {
    const url = new URL(target);
    const cookie = this.jar.header(url);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.address,
          port: this.port,
          path: `${url.pathname}${url.search}`,
          method,
          headers: {
            host: url.host,
            accept: 'text/html',
            ...(cookie === undefined ? {} : { cookie }),
            ...headers,
          },
          agent: false,
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const setCookies = res.headers['set-cookie'] ?? [];
            this.jar.store(url, new Response(null, { headers: setCookies.map((v) => ['set-cookie', v]) }));
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
              setCookies,
            });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${url.href} timed out`)));
      req.on('error', reject);
      req.end(form?.toString());
    });
  }
}

/** Portcullis, its Envoy, the upstream and the IdP, wired for sign-in; see `startSignInRig`. */
export interface SignInRig {
  readonly idp: TestIdp;
  readonly portcullis: TestPortcullis;
  readonly upstream: EchoUpstream;
  /** Envoy's listener port. */
  readonly port: number;
  /** `http://app.localhost:<port>`: a route that needs a signed-in user of example.com. */
  readonly appOrigin: string;
  /** `http://public.localhost:<port>`: a public route to the same upstream. */
  readonly publicOrigin: string;
  /** `http://authenticate.localhost:<port>`: the authenticate service URL. */
  readonly authenticateOrigin: string;
  /** The config as written (secrets included), for a second replica. */
  readonly config: Record<string, unknown>;
  /** The id of the session whose cookie `client` holds for `host` (default: the authenticate host). */
  sessionIdOf(client: EnvoyClient, host?: string): string | undefined;
  /** A fresh client with an empty jar. */
  client(): EnvoyClient;
  /**
   * Visits `path` on the app without a session and follows Portcullis to the sign-in page: the
   * app's 302, then the sign-in page's answer (a 302 to the IdP with the flow cookie in the jar,
   * or an error page).
   */
  startSignIn(client: EnvoyClient, path: string): Promise<{ signInUrl: URL; answer: Answer }>;
  /**
   * The whole sign-in of alice from `path`: the IdP's login, the callback, the handoff, and the
   * original URL answering 200. Gives the stored session's id.
   */
  signIn(client: EnvoyClient, path: string): Promise<{ sessionId: string }>;
  stop(): Promise<void>;
}

/**
 * Starts the IdP (with `idp` options), an echo upstream and Portcullis (with `idpTimeoutMs`) whose
 * authenticate URL carries Envoy's listener port, and waits until Envoy serves that config.
 * Explicit `shared_secret` and `cookie_secret` let a second replica read this one's state.
 */
export async function startSignInRig(
  options: {
    idp?: TestIdpOptions;
    idpTimeoutMs?: number;
    /** More options for the config (e.g. `databroker_storage_type: redis`). */
    extraConfig?: Record<string, unknown>;
    /** Options of the app route instead of `allowed_domains: [example.com]` (a policy to test). */
    appRoute?: Record<string, unknown>;
    /** More routes, before the app route (more specific paths of app.localhost go here), given the upstream's URL. */
    extraRoutes?: (upstreamUrl: string) => Record<string, unknown>[];
  } = {},
): Promise<SignInRig> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const idp = await startTestIdp(options.idp);
    cleanups.push(() => idp.close());
    const upstream = await startEchoUpstream({ id: 'app' });
    cleanups.push(() => upstream.stop());
    const sharedSecret = randomBytes(32);
    const secrets = {
      shared_secret: sharedSecret.toString('base64'),
      cookie_secret: randomBytes(32).toString('base64'),
    };
    const handles = new SessionHandles(sharedSecret);
    const config = (authenticateUrl: string): Record<string, unknown> => ({
      ...options.extraConfig,
      ...secrets,
      authenticate_service_url: authenticateUrl,
      idp_provider: 'oidc',
      idp_provider_url: idp.issuer,
      idp_client_id: CLIENT.clientId,
      idp_client_secret: CLIENT.clientSecret,
      routes: [
        ...(options.extraRoutes?.(upstream.url) ?? []),
        {
          from: 'http://app.localhost',
          to: upstream.url,
          ...(options.appRoute ?? { allowed_domains: ['example.com'] }),
        },
        { from: 'http://public.localhost', to: upstream.url, allow_public_unauthenticated_access: true },
      ],
    });
    // The authenticate URL carries the listener's port, which the harness picks: start, then
    // write the config again with the port and wait until Envoy sends browsers there.
    const portcullis = await startPortcullis(
      config('http://authenticate.localhost'),
      options.idpTimeoutMs === undefined ? {} : { idpTimeoutMs: options.idpTimeoutMs },
    );
    cleanups.push(() => portcullis.stop());
    const port = portcullis.proxyPort;
    const appOrigin = `http://app.localhost:${port}`;
    const authenticateOrigin = `http://authenticate.localhost:${port}`;
    idp.addClient({
      ...CLIENT,
      redirectUris: [`${authenticateOrigin}/oauth2/callback`],
      postLogoutRedirectUris: [`${authenticateOrigin}/.portcullis/signed_out`],
    });
    const final = config(authenticateOrigin);
    portcullis.writeConfig(final);
    const probe = new EnvoyClient(port);
    await waitFor(
      async () => (await probe.get(`${appOrigin}/`)).headers.location?.startsWith(authenticateOrigin),
      { what: 'the app to send browsers to the authenticate URL with its port', timeoutMs: 15_000 },
    );
    await portcullis.waitForEnvoyToApply('the config with the listener port');

    const startSignIn: SignInRig['startSignIn'] = async (client, path) => {
      const original = `${appOrigin}${path}`;
      const app = await client.get(original);
      assert.equal(app.status, 302, `${original} did not redirect to sign in: ${app.body}`);
      const signInUrl = new URL(app.headers.location ?? '');
      assert.equal(`${signInUrl.origin}${signInUrl.pathname}`, `${authenticateOrigin}${SIGN_IN_PATH}`);
      assert.equal(signInUrl.searchParams.get(REDIRECT_URI_PARAM), original);
      return { signInUrl, answer: await client.get(signInUrl) };
    };
    const signIn: SignInRig['signIn'] = async (client, path) => {
      const { answer } = await startSignIn(client, path);
      assert.equal(answer.status, 302, `sign-in did not lead to the IdP: ${answer.body}`);
      const callback = await completeLogin(
        answer.headers.location ?? '',
        idp.user.username,
        idp.user.password,
      );
      const handoff = await client.get(callback);
      assert.equal(handoff.status, 302, `the callback failed: ${handoff.body}`);
      const handoffUrl = new URL(handoff.headers.location ?? '');
      assert.equal(`${handoffUrl.origin}${handoffUrl.pathname}`, `${appOrigin}${HANDOFF_PATH}`);
      const landed = await client.get(handoffUrl);
      assert.equal(landed.headers.location, `${appOrigin}${path}`, `the handoff failed: ${landed.body}`);
      const original = await client.get(`${appOrigin}${path}`);
      assert.equal(original.status, 200, `the signed-in request failed: ${original.body}`);
      const handle = client.jar.get(`app.localhost:${port}`, SESSION_COOKIE);
      assert.ok(handle !== undefined, 'no session cookie on the app host');
      const sessionId = handles.verify(handle);
      assert.ok(sessionId !== undefined, 'the session cookie does not verify');
      return { sessionId };
    };
    return {
      idp,
      portcullis,
      upstream,
      port,
      appOrigin,
      publicOrigin: `http://public.localhost:${port}`,
      authenticateOrigin,
      config: final,
      client: () => new EnvoyClient(port),
      sessionIdOf: (client, host = `authenticate.localhost:${port}`) => {
        const handle = client.jar.get(host, SESSION_COOKIE);
        return handle === undefined ? undefined : handles.verify(handle);
      },
      startSignIn,
      signIn,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
