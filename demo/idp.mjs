// The quickstart's identity provider: a real OpenID Connect provider (npm `oidc-provider`, a
// devDependency) on loopback with one demo user and one demo client. Demo tooling only: nothing
// under src/ imports this folder, and no Portcullis config can start it.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { URLSearchParams } from 'node:url';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/** Largest login form body read, in bytes; a bigger one is refused. */
const MAX_FORM_BYTES = 8 * 1024;

/**
 * Starts the demo OIDC provider on `host:port` (issuer `http://host:port`).
 *
 * `users` are `{ login, password, claims }` (claims without `sub`; `sub` is the login); `client`
 * is one registered client (`client_id`, `client_secret`, `redirect_uris`,
 * `post_logout_redirect_uris`). The login page checks the password (unlike oidc-provider's
 * devInteractions, which accept anything); consent is implied (one first-party app). The ID token
 * carries the profile claims (name, email, groups) as well as userinfo, and every code grant gets a
 * refresh token, so Portcullis's refresh path runs too. RP-initiated logout signs the user out of
 * the IdP without a confirmation page, so the next sign-in asks for the password again.
 * `log(line)` receives one line per sign-in and sign-out. Resolves to `{ issuer, close() }`.
 */
export async function startDemoIdp({ host, port, users, client, log }) {
  const issuer = `http://${host}:${port}`;
  const accounts = new Map(users.map((user) => [user.login, user]));
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingJwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'demo-idp' };
  const provider = new Provider(issuer, {
    clients: [{ grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], ...client }],
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username', 'groups'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      // A client may revoke only its own tokens.
      revocation: {
        enabled: true,
        allowedPolicy: async (_ctx, caller, token) => token.clientId === caller.clientId,
      },
      rpInitiatedLogout: { enabled: true, logoutSource: autoSubmitLogout },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async (_ctx, registered) => registered.grantTypeAllowed('refresh_token'),
    pkce: { required: () => true },
    // Explicit lifetimes (seconds): an hour for access and ID tokens, so Portcullis refreshes the
    // session about once an hour while the demo runs.
    ttl: {
      AccessToken: 3600,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Interaction: 600,
      Session: 24 * 3600,
      Grant: 24 * 3600,
    },
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page(
        'The demo IdP refused this request',
        `<pre>${escapeHtml(JSON.stringify(out, null, 2))}</pre>`,
      );
    },
    findAccount: (_ctx, sub) => {
      const user = accounts.get(sub);
      if (user === undefined) return undefined;
      return { accountId: sub, claims: () => ({ sub, preferred_username: sub, ...user.claims }) };
    },
  });
  provider.on('end_session.success', () => log('demo IdP: signed out (RP-initiated logout)'));
  provider.on('server_error', (_ctx, err) => log(`demo IdP: error: ${err.message}`));
  const oidc = provider.callback();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', issuer).pathname;
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(path);
    if (match === null) {
      oidc(req, res);
      return;
    }
    const answer = match[2] === undefined ? showInteraction : submitLogin;
    answer(provider, accounts, req, res, log).catch((err) => {
      log(`demo IdP: interaction failed: ${err.message}`);
      if (!res.headersSent) sendPage(res, 400, page('Sign-in failed', `<p>${escapeHtml(err.message)}</p>`));
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    issuer,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** GET /interaction/:uid: the login form, or (after login) the implied consent. */
async function showInteraction(provider, _accounts, req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    sendPage(res, 200, loginPage(details.uid, undefined));
    return;
  }
  if (details.prompt.name !== 'consent') throw new Error(`unsupported prompt ${details.prompt.name}`);
  const grant =
    details.grantId === undefined
      ? new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id })
      : await provider.Grant.find(details.grantId);
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

/** POST /interaction/:uid/login: checks the demo user's password. */
async function submitLogin(provider, accounts, req, res, log) {
  if (req.method !== 'POST') throw new Error('the login form is submitted with POST');
  const details = await provider.interactionDetails(req, res);
  const form = await readForm(req);
  const login = form.get('login') ?? '';
  const user = accounts.get(login);
  if (user === undefined || user.password !== form.get('password')) {
    log(`demo IdP: wrong user name or password for "${login}"`);
    sendPage(res, 401, loginPage(details.uid, 'Wrong user name or password.'));
    return;
  }
  log(`demo IdP: ${login} signed in`);
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: login } },
    { mergeWithLastSubmission: false },
  );
}

/** Reads a bounded `application/x-www-form-urlencoded` body. */
async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** oidc-provider's logout page, submitted at once (the demo has nothing to confirm). */
async function autoSubmitLogout(ctx, form) {
  const yes = '<input type="hidden" name="logout" value="yes"/>';
  ctx.body = page(
    'Signing out',
    `${form.replace('</form>', `${yes}</form>`)}<p>Signing you out…</p>` +
      '<script>document.forms[0].submit()</script>',
  );
}

function loginPage(uid, error) {
  const alert = error === undefined ? '' : `<p role="alert" class="error">${escapeHtml(error)}</p>`;
  return page(
    'Sign in to the demo IdP',
    `${alert}<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<label for="login">User name</label><input id="login" name="login" autocomplete="username" autofocus required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:24rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
label,input,button{display:block;width:100%;box-sizing:border-box}input{margin:.25rem 0 1rem;padding:.5rem;font:inherit}
button{padding:.6rem;font:inherit;background:#1f5fbf;color:#fff;border:0;border-radius:4px;cursor:pointer}
.error{color:#a40000}small{color:#57606a}</style></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}<p><small>Demo identity provider (oidc-provider on loopback). Not for production.</small></p></main></body></html>`;
}

function sendPage(res, status, html) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(html);
}

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text) {
  return String(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}
