// The quickstart's upstream application: shows the identity Portcullis passed it. It verifies the
// signed identity assertion (X-Portcullis-Jwt-Assertion) against the JWKS Portcullis serves at
// /.well-known/portcullis/jwks.json on the route host, as a real application behind Portcullis
// should, and prints one line per request.
/* global Response -- Node's fetch Response, which jose's customFetch must return */
import { Buffer } from 'node:buffer';
import { createServer, request } from 'node:http';
import { createRemoteJWKSet, customFetch, jwtVerify } from 'jose';
import { escapeHtml } from './idp.mjs';

const ASSERTION_HEADER = 'x-portcullis-jwt-assertion';
const JWKS_PATH = '/.well-known/portcullis/jwks.json';

/**
 * Starts the demo upstream on `host:port`. `proxy` is Portcullis's listener (`127.0.0.1:8080`)
 * and `routeHost` the protected route's host as browsers use it (`app.localhost:8080`): the
 * assertion must be issued for it (`iss`/`aud`) and verify against that host's JWKS, fetched
 * through the listener. Answers HTML, or JSON when the client asks for it (`Accept:
 * application/json` or `?format=json`); `/healthz` answers `ok`. Resolves to `{ url, close() }`.
 */
export async function startDemoUpstream({ host, port, proxy, routeHost, log }) {
  const jwks = createRemoteJWKSet(new URL(`http://${routeHost}${JWKS_PATH}`), {
    [customFetch]: (url, options) => fetchThrough(proxy, url, options),
  });
  const identifiers = [routeHost, `http://${routeHost}/`, `https://${routeHost}/`];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${routeHost}`);
    if (url.pathname === '/healthz') {
      res.end('ok\n');
      return;
    }
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    identify(req.headers[ASSERTION_HEADER], jwks, identifiers).then((identity) => {
      const who = identity.claims?.email || identity.claims?.sub || identity.problem;
      // Envoy rewrites Host to the upstream's and keeps the browser's in X-Forwarded-Host.
      const host = req.headers['x-forwarded-host'] ?? req.headers.host ?? '-';
      log(`${req.method} http://${host}${url.pathname}${url.search} -> ${who}`);
      const wantsJson = url.searchParams.get('format') === 'json' || /json/.test(req.headers.accept ?? '');
      const body = wantsJson
        ? `${JSON.stringify(identity, null, 2)}\n`
        : identityPage(identity, req, routeHost);
      res.writeHead(200, {
        'content-type': wantsJson ? 'application/json' : 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(body);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `{ verified, claims }` for a good assertion, `{ verified: false, problem }` otherwise. */
async function identify(assertion, jwks, identifiers) {
  if (typeof assertion !== 'string')
    return { verified: false, problem: 'no identity assertion (a public route)' };
  try {
    const { payload } = await jwtVerify(assertion, jwks, { issuer: identifiers, audience: identifiers });
    return { verified: true, claims: payload };
  } catch (err) {
    return { verified: false, problem: `the identity assertion did not verify: ${err.message}` };
  }
}

/** fetch() for jose's JWKS set, sent to Portcullis's listener with the route host as Host. */
function fetchThrough(proxy, url, options) {
  const [proxyHost, proxyPort] = proxy.split(':');
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const req = request(
      {
        host: proxyHost,
        port: Number(proxyPort),
        path: target.pathname,
        method: options.method ?? 'GET',
        headers: { ...options.headers, host: target.host },
        signal: options.signal,
      },
      (res) => {
        const chunks = [];
        res.on('data', (chunk) => chunks.push(chunk));
        res.on('end', () =>
          resolve(
            new Response(Buffer.concat(chunks), {
              status: res.statusCode ?? 502,
              headers: Object.entries(res.headers).flatMap(([name, value]) =>
                value === undefined ? [] : [[name, String(value)]],
              ),
            }),
          ),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

function identityPage(identity, req, routeHost) {
  const claims = identity.claims ?? {};
  const groups = Array.isArray(claims.groups) ? claims.groups : [];
  const rows = identity.verified
    ? `<dl><dt>Name</dt><dd>${escapeHtml(claims.name || '(none)')}</dd>
<dt>Email</dt><dd>${escapeHtml(claims.email || '(none)')}</dd>
<dt>Groups</dt><dd>${groups.length === 0 ? '(none)' : groups.map((group) => `<code>${escapeHtml(group)}</code>`).join(' ')}</dd></dl>
<p class="ok">The identity assertion verified against <code>http://${escapeHtml(routeHost)}${JWKS_PATH}</code>.</p>
<h2>Raw claims</h2><pre>${escapeHtml(JSON.stringify(claims, null, 2))}</pre>`
    : `<p class="problem">${escapeHtml(identity.problem)}</p>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Portcullis demo app</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
dt{font-weight:600}dd{margin:0 0 .5rem}pre{background:#f6f8fa;padding:1rem;overflow:auto}
code{background:#f6f8fa;padding:0 .2rem}.ok{color:#116329}.problem{color:#a40000}</style></head>
<body><main><h1>Hello from the demo app</h1>
<p>Portcullis let this request through (<code>${escapeHtml(req.method)} ${escapeHtml(req.url)}</code>) and told the app who you are:</p>
${rows}
<p><a href="/.portcullis/">Your Portcullis session</a> · <a href="/.portcullis/sign_out">Sign out</a> · <a href="?format=json">JSON</a></p>
</main></body></html>`;
}
