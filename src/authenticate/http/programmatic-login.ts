/**
 * PROGRAMMATIC_LOGIN_PATH on a route host (pomerium-behaviour.md 5.6): a CLI or desktop client
 * asks for a sign-in URL, opens it in a browser, and after sign-in its redirect URI receives the
 * session handle as `portcullis_jwt`, which it then sends as `Authorization: Portcullis <token>`.
 * The redirect host must be in `programmatic_redirect_domain_whitelist`; answers are text/plain.
 */
import { isLoopbackIp } from '../../shared/loopback.js';
import { PROGRAMMATIC_PARAM, REDIRECT_URI_PARAM, SIGN_IN_PATH } from '../../contract/endpoints.js';
import { sealProgrammaticRequest } from '../flow/codecs.js';
import { textResponse } from './responses.js';
import type { OwnHandler } from './types.js';

/**
 * Whether a programmatic login may redirect to `url`: http or https, and a host equal
 * (case-insensitively) to one of `allowed`; `localhost` in the list also allows the loopback
 * addresses 127.0.0.0/8 and ::1 (not `*.localhost`).
 */
export function programmaticRedirectAllowed(url: URL, allowed: readonly string[]): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const domains = allowed.map((domain) => domain.toLowerCase());
  if (domains.includes(host)) return true;
  if (!domains.includes('localhost')) return false;
  return isLoopbackIp(host);
}

/**
 * GET only (405 otherwise). 400 when `portcullis_redirect_uri` is missing, not an http(s) URL, or
 * its host is not allowed (saying which host and which option lists the allowed ones); 404 when
 * this host has no route. 200: the sign-in URL, carrying a sealed, single-use request with the
 * origin Portcullis serves this route host on (where the handoff lands: the listener's scheme,
 * the host name, the port `from` names or the listener's), the client's redirect URI and the
 * route's identity provider.
 */
export const programmaticLoginHandler: OwnHandler = async (request, context) => {
  if (request.method !== 'GET') return textResponse(405, 'programmatic login takes GET', [['allow', 'GET']]);
  const raw = request.url.searchParams.get(REDIRECT_URI_PARAM);
  if (raw === null || raw === '')
    return textResponse(
      400,
      `${REDIRECT_URI_PARAM} is required: the URL that receives the token after sign-in`,
    );
  let redirect: URL;
  try {
    redirect = new URL(raw);
  } catch {
    return textResponse(400, `${REDIRECT_URI_PARAM} is not an absolute URL`);
  }
  if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:')
    return textResponse(400, `${REDIRECT_URI_PARAM} must be an http or https URL`);
  const settings = context.settings();
  if (!programmaticRedirectAllowed(redirect, settings.programmaticRedirectDomains))
    return textResponse(
      400,
      `redirect host "${redirect.hostname}" is not allowed: programmatic_redirect_domain_whitelist lists the hosts a programmatic login may redirect to`,
    );
  const located = context.routes().locate(request.url);
  if (located === undefined) return textResponse(404, 'no route is configured for this host');
  // The origin comes from the route's configuration, never from the Host header: the port the
  // client named (or left out, behind `--via`) need not be where Portcullis serves the route.
  const sealed = await sealProgrammaticRequest(
    settings.sharedSecret,
    { origin: located.origin, redirectUri: redirect.href, idpId: located.idpId, jti: context.randomId() },
    context.now(),
  );
  const signIn = new URL(SIGN_IN_PATH, settings.authenticateUrl);
  signIn.searchParams.set(PROGRAMMATIC_PARAM, sealed);
  return textResponse(200, signIn.href);
};
