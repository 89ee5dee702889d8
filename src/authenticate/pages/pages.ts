/**
 * The authenticate service's pages (errors, sign-out confirmation, signed out, the user page),
 * each rendered in the shared shell (shared/html-page.ts) and answered as an OwnResponse. Pure
 * functions of their arguments; every value from a session, a claim or a request is escaped.
 */
import { STATUS_CODES } from 'node:http';
import { CSRF_PARAM, SIGN_OUT_PATH } from '../../contract/endpoints.js';
import type { Session } from '../../session/session.js';
import { PAGE_HEADERS, html, renderPage } from '../../shared/html-page.js';
import type { Html, Page } from '../../shared/html-page.js';
import type { OwnResponse } from '../http/types.js';

/** An HTML response of `page` with the shell's headers (no-store, strict CSP) and any cookies. */
export function pageResponse(status: number, page: Page, setCookies: readonly string[] = []): OwnResponse {
  return { status, headers: PAGE_HEADERS, setCookies, body: renderPage(page) };
}

/**
 * An error page: `title` as the heading, `message` below it, the request id (so a user can quote
 * it to an operator) and, when given, a "Try again" link to `retryUrl` (only an http(s) URL or a
 * path: anything else is left out). text/html, no-store.
 */
export function errorResponse(
  status: number,
  title: string,
  message: string,
  requestId: string,
  retryUrl?: string,
): OwnResponse {
  const statusText = STATUS_CODES[status] ?? 'Error';
  return pageResponse(status, {
    title: `${status} ${statusText}`,
    heading: title,
    content: html`<p>${message}</p>
      ${retryUrl === undefined || !isNavigable(retryUrl)
        ? undefined
        : html`<p><a class="button" href="${retryUrl}">Try again</a></p>`}
      <p class="muted">Status ${status} ${statusText}. Request id: <code>${requestId}</code></p>`,
  });
}

/** Whether `url` is safe as a link: a same-origin path or an http(s) URL (never `javascript:`). */
function isNavigable(url: string): boolean {
  if (url.startsWith('/') && !url.startsWith('//')) return true;
  return URL.canParse(url) && ['http:', 'https:'].includes(new URL(url).protocol);
}

/** The sign-out button: a POST form to SIGN_OUT_PATH carrying the session's CSRF token. */
export function signOutForm(csrfToken: string, label = 'Sign out'): Html {
  return html`<form method="post" action="${SIGN_OUT_PATH}">
    <input type="hidden" name="${CSRF_PARAM}" value="${csrfToken}" />
    <button type="submit">${label}</button>
  </form>`;
}

/** The page a GET sign-out without a valid token shows: who would be signed out, and the button. */
export function signOutConfirmResponse(session: Session, csrfToken: string): OwnResponse {
  return pageResponse(200, {
    title: 'Sign out?',
    content: html`<p>You are signed in as <strong>${displayName(session)}</strong>.</p>
      <p>Signing out ends this session on every site it opened.</p>
      ${signOutForm(csrfToken)}`,
  });
}

/** The signed-out page, with any cookie-clearing Set-Cookie values. */
export function signedOutResponse(setCookies: readonly string[] = []): OwnResponse {
  return pageResponse(
    200,
    {
      title: 'Signed out',
      content: html`<p>You are signed out. Close this tab, or <a href="/">sign in again</a>.</p>`,
    },
    setCookies,
  );
}

/** The user page without a valid session: 200 with a sign-in link to `/` of this host. */
export function notSignedInResponse(): OwnResponse {
  return pageResponse(200, {
    title: 'You are not signed in',
    content: html`<p>There is no session for this browser on this site.</p>
      <p><a class="button" href="/">Sign in</a></p>`,
  });
}

/** The user's display name: name, else email, else user id. */
export function displayName(session: Session): string {
  return session.name ?? session.email ?? session.userId;
}

/** A time (ms) as ISO 8601 in UTC. */
function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The provider that made a session, as the user page names it. */
export interface SessionProvider {
  /** Its configured name (`default` for the global `idp_*` keys). */
  readonly name: string;
  /** Its issuer (discovery base) URL, when known. */
  readonly url: string | undefined;
}

/**
 * The user page: who the session is (name, email, user id), groups, every claim (values
 * JSON-stringified, all escaped), the identity provider (its name and issuer URL when the running
 * config still has it, and its id), issued and expiry times (ISO, UTC), and the sign-out button.
 */
export function userPageResponse(
  session: Session,
  csrfToken: string,
  provider?: SessionProvider,
): OwnResponse {
  const claims = Object.entries(session.claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return pageResponse(200, {
    title: 'Your session',
    heading: `Signed in as ${displayName(session)}`,
    content: html`<dl>
        <dt>Name</dt>
        <dd>${session.name ?? '—'}</dd>
        <dt>Email</dt>
        <dd>${session.email ?? '—'}</dd>
        <dt>User id</dt>
        <dd><code>${session.userId}</code></dd>
        <dt>Identity provider</dt>
        <dd>
          ${provider === undefined
            ? ''
            : html`<strong class="idp-name">${provider.name}</strong> ${provider.url === undefined
                  ? ''
                  : html`(<code class="idp-url">${provider.url}</code>)`}`}
          <code>${session.idpId}</code>
        </dd>
        <dt>Signed in</dt>
        <dd><time datetime="${isoTime(session.issuedAt)}">${isoTime(session.issuedAt)}</time></dd>
        <dt>Session expires</dt>
        <dd><time datetime="${isoTime(session.expiresAt)}">${isoTime(session.expiresAt)}</time></dd>
      </dl>
      <h2>Groups</h2>
      ${session.groups.length === 0
        ? html`<p class="muted">The identity provider sent no groups.</p>`
        : html`<ul>
            ${session.groups.map((group) => html`<li><code>${group}</code></li>`)}
          </ul>`}
      <h2>Claims</h2>
      ${claims.length === 0
        ? html`<p class="muted">No claims.</p>`
        : html`<table>
            <caption class="muted">
              Every claim of the identity token and userinfo, as policies see them.
            </caption>
            <thead>
              <tr>
                <th scope="col">Claim</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              ${claims.map(
                ([name, value]) =>
                  html`<tr>
                    <th scope="row"><code>${name}</code></th>
                    <td><code>${JSON.stringify(value) ?? 'undefined'}</code></td>
                  </tr>`,
              )}
            </tbody>
          </table>`}
      ${signOutForm(csrfToken)}`,
  });
}
