/**
 * The test IdP's own pages and its interaction endpoint (login form, automatic consent), on
 * oidc-provider's interaction API. Split from test-idp.ts; nothing here is used elsewhere.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Provider } from 'oidc-provider';
import type { TestIdpAccount } from './test-idp.js';

const PAGE_STYLE =
  'body{font:16px system-ui,sans-serif;max-width:22rem;margin:3rem auto;padding:0 1rem}' +
  'label{display:block;margin:.75rem 0}input{display:block;width:100%;padding:.4rem;font:inherit}' +
  'button{margin-top:1rem;padding:.5rem 1rem;font:inherit}[role=alert]{color:#a00}';

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><style>${PAGE_STYLE}</style></head><body><main><h1>${title}</h1>${body}</main></body></html>`;
}

/** The login form (our own page: completeLogin finds its action and hidden inputs). */
function loginPage(uid: string, error: string | undefined): string {
  const alert = error === undefined ? '' : `<p role="alert">${error}</p>`;
  return page(
    'Sign in to the test IdP',
    `${alert}<form method="post" action="/interaction/${uid}/login">` +
      `<input type="hidden" name="uid" value="${uid}">` +
      '<label>Username<input name="login" autocomplete="username" required autofocus></label>' +
      '<label>Password<input name="password" type="password" autocomplete="current-password" required></label>' +
      '<button type="submit">Sign in</button></form>',
  );
}

async function formBody(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** A grant of everything the client asked for (consent is automatic at the test IdP). */
export async function grantAll(
  provider: Provider,
  accountId: string,
  clientId: string,
  scope: string,
): Promise<string> {
  const grant = new provider.Grant({ accountId, clientId });
  grant.addOIDCScope(scope);
  return grant.save();
}

export async function interaction(
  provider: Provider,
  accounts: ReadonlyMap<string, TestIdpAccount>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login' && req.method === 'POST') {
    const form = await formBody(req);
    const account = accounts.get(form.get('login') ?? '');
    if (account !== undefined && account.password === form.get('password')) {
      await provider.interactionFinished(req, res, { login: { accountId: account.username } });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(loginPage(details.uid, 'Wrong username or password.'));
    return;
  }
  if (details.prompt.name === 'login') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(loginPage(details.uid, undefined));
    return;
  }
  // consent (only when a grant was not made automatically): grant what was asked.
  const session = details as unknown as { session?: { accountId?: string } };
  const grantId = await grantAll(
    provider,
    session.session?.accountId ?? '',
    String(details.params['client_id']),
    String(details.params['scope'] ?? 'openid'),
  );
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
