/**
 * Programmatic login from the client side (pomerium-behaviour.md 5.6): a loopback listener on a
 * random port receives the token; Portcullis is asked for a sign-in URL whose flow ends at that
 * listener; the URL is opened in a browser (or printed, with --no-browser); the browser lands on
 * `http://127.0.0.1:<port>/cb?portcullis_jwt=<token>` and is shown a "signed in" page. The redirect
 * names 127.0.0.1 rather than `localhost` (the default whitelist entry `localhost` allows loopback
 * IPs too), so a browser that resolves `localhost` to ::1 first still reaches the listener.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Writable } from 'node:stream';
import { JWT_PARAM } from '../contract/endpoints.js';
import { PortcullisError, errorMessage } from '../shared/errors.js';
import { PAGE_HEADERS, html, renderPage } from '../shared/html-page.js';
import type { BrowserOpener } from './browser.js';
import type { PortcullisEndpoint } from './endpoint.js';
import { fetchSignInUrl } from './portcullis-http.js';

/** The path on the loopback listener the redirect names. */
const CALLBACK_PATH = '/cb';

/** What one sign-in needs. */
export interface SignInOptions {
  readonly endpoint: PortcullisEndpoint;
  /** Opens the sign-in URL; undefined with --no-browser (the URL is printed on stderr instead). */
  readonly openBrowser: BrowserOpener | undefined;
  /** Where the URL and progress lines go (never the token). */
  readonly stderr: Writable;
  /** How long to wait for the browser to come back (the CLI uses 5 minutes). */
  readonly timeoutMs: number;
  /** Aborts the wait (Ctrl-C); the listener is closed either way. */
  readonly signal?: AbortSignal;
}

/**
 * Runs one programmatic login and resolves with the token. Rejects with a one-line
 * PortcullisError when Portcullis refuses, the wait times out or is aborted. The listener is
 * closed before this settles.
 */
export async function signIn(options: SignInOptions): Promise<string> {
  const callback = await startCallbackListener();
  try {
    const signInUrl = await fetchSignInUrl(options.endpoint, callback.redirectUri);
    await showSignInUrl(signInUrl.href, options);
    return await waitFor(callback.token, options);
  } finally {
    callback.close();
  }
}

async function showSignInUrl(url: string, options: SignInOptions): Promise<void> {
  const host = options.endpoint.origin.host;
  if (options.openBrowser === undefined) {
    options.stderr.write(`portcullis: to sign in to ${host}, open this URL in a browser:\n${url}\n`);
    return;
  }
  try {
    await options.openBrowser(url);
    options.stderr.write(
      `portcullis: signing in to ${host} in your browser; if none opened, visit:\n${url}\n`,
    );
  } catch (err) {
    options.stderr.write(
      `portcullis: could not open a browser (${errorMessage(err)}); to sign in to ${host}, open:\n${url}\n`,
    );
  }
}

function waitFor(token: Promise<string>, options: SignInOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const minutes = Math.round(options.timeoutMs / 60_000);
    const timer = setTimeout(
      () =>
        reject(
          new PortcullisError(
            'CLIENT_LOGIN',
            `no sign-in completed within ${minutes >= 1 ? `${minutes} min` : `${options.timeoutMs} ms`}`,
          ),
        ),
      options.timeoutMs,
    );
    const onAbort = (): void => reject(new PortcullisError('CLIENT_ABORTED', 'sign-in cancelled'));
    if (options.signal?.aborted === true) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    token.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    });
  });
}

interface CallbackListener {
  readonly redirectUri: string;
  /** Settles with the first token that reaches CALLBACK_PATH. */
  readonly token: Promise<string>;
  close(): void;
}

/**
 * The loopback listener. Only `GET /cb` with a token counts (the browser also asks for
 * /favicon.ico); the page it answers carries `Referrer-Policy: no-referrer` (PAGE_HEADERS), since
 * the token is in the URL.
 */
async function startCallbackListener(): Promise<CallbackListener> {
  let deliver: (token: string) => void = () => undefined;
  const token = new Promise<string>((resolve) => {
    deliver = resolve;
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const received = url.searchParams.get(JWT_PARAM);
    const headers = Object.fromEntries([...PAGE_HEADERS, ['connection', 'close']]);
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || received === null || received === '') {
      res.writeHead(404, headers).end(page('Not found', 'This address only receives a Portcullis sign-in.'));
      return;
    }
    res
      .writeHead(200, headers)
      .end(page('Signed in', 'You are signed in. You can close this tab.'), () => deliver(received));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    token,
    close: () => {
      server.close();
      server.closeAllConnections();
    },
  };
}

function page(title: string, text: string): string {
  return renderPage({ title, content: html`<p>${text}</p>` });
}
