/**
 * The values the sign-in flow carries through the browser, each sealed for its own purpose
 * (sealed.ts): the `state` sent to the IdP, the per-flow cookie, the handoff from the authenticate
 * host to a route host, and the programmatic-login request. Each `open*` checks every field's type,
 * so a value that opens is the value we sealed.
 */
import type { JWTPayload } from 'jose';
import { FlowTokenError, open, optionalTextField, seal, textField } from './sealed.js';

/** How long a sign-in may take at the IdP: the state and the flow cookie expire after it. */
export const SIGN_IN_LIFETIME_MS = 10 * 60_000;
/** How long a handoff URL is valid (it is followed by the browser at once). */
export const HANDOFF_LIFETIME_MS = 60_000;
/** How long a programmatic sign-in URL is valid. */
export const PROGRAMMATIC_LIFETIME_MS = 10 * 60_000;

/** Where a sign-in returns: the original URL (browser), or a programmatic client's request. */
export type SignInTarget =
  | { readonly kind: 'url'; readonly url: string }
  | { readonly kind: 'programmatic'; readonly request: ProgrammaticRequest };

/** The `state` parameter: sealed with `cookie_secret`, bound to one flow cookie by `flowId` and `csrf`. */
export interface SignInState {
  readonly flowId: string;
  readonly csrf: string;
  readonly target: SignInTarget;
  readonly idpId: string;
  /** Expiry (ms), for the replay guard. */
  readonly expiresAt: number;
}

/** The per-flow cookie `<cookie_name>_flow_<flowId>` (sealed with `cookie_secret`). */
export interface FlowCookie {
  readonly flowId: string;
  readonly csrf: string;
  readonly codeVerifier: string;
  readonly nonce: string;
}

/** The handoff to a route host (sealed with `shared_secret`); single use by `jti`. */
export interface Handoff {
  /** The session handle the route host's cookie will carry. */
  readonly handle: string;
  /** The original URL (browser), or the route host's origin (programmatic). */
  readonly url: string;
  /** A programmatic client's redirect URI, which receives the handle as `portcullis_jwt`. */
  readonly programmaticRedirect: string | undefined;
  readonly jti: string;
  /** Expiry (ms), for the replay guard. */
  readonly expiresAt: number;
}

/** A programmatic login (sealed with `shared_secret`), carried through sign-in. */
export interface ProgrammaticRequest {
  /** The route host's origin, where the handoff lands. */
  readonly origin: string;
  /** The client's redirect URI (already checked against the allowed hosts). */
  readonly redirectUri: string;
  readonly idpId: string;
}

/** A programmatic-login request as its sign-in link carries it: single use by `jti`. */
export interface ProgrammaticLink extends ProgrammaticRequest {
  readonly jti: string;
  /** Expiry (ms), for the replay guard. */
  readonly expiresAt: number;
}

const expiry = (payload: JWTPayload): number => (payload.exp ?? 0) * 1000;

/** Seals a sign-in state (cookie_secret). */
export function sealSignInState(
  cookieSecret: Uint8Array,
  state: Omit<SignInState, 'expiresAt'>,
  now: number,
): Promise<string> {
  const target =
    state.target.kind === 'url'
      ? { url: state.target.url }
      : {
          origin: state.target.request.origin,
          redirect: state.target.request.redirectUri,
        };
  return seal(
    cookieSecret,
    'sign-in-state',
    { fid: state.flowId, csrf: state.csrf, idp: state.idpId, ...target },
    now,
    SIGN_IN_LIFETIME_MS,
  );
}

/** Opens a sign-in state; throws FlowTokenError. */
export async function openSignInState(
  cookieSecret: Uint8Array,
  sealed: string,
  now: number,
): Promise<SignInState> {
  return signInStateOf(await open(cookieSecret, 'sign-in-state', sealed, now));
}

/** The typed state inside an opened (or expired, authentic) payload; throws FlowTokenError. */
export function signInStateOf(payload: JWTPayload): SignInState {
  const purpose = 'sign-in-state';
  const idpId = textField(purpose, payload, 'idp');
  const url = optionalTextField(purpose, payload, 'url');
  const target: SignInTarget =
    url !== undefined
      ? { kind: 'url', url }
      : {
          kind: 'programmatic',
          request: {
            origin: textField(purpose, payload, 'origin'),
            redirectUri: textField(purpose, payload, 'redirect'),
            idpId,
          },
        };
  return {
    flowId: textField(purpose, payload, 'fid'),
    csrf: textField(purpose, payload, 'csrf'),
    target,
    idpId,
    expiresAt: expiry(payload),
  };
}

/** Seals a flow cookie's value (cookie_secret). */
export function sealFlowCookie(cookieSecret: Uint8Array, cookie: FlowCookie, now: number): Promise<string> {
  return seal(
    cookieSecret,
    'flow-cookie',
    { fid: cookie.flowId, csrf: cookie.csrf, pkce: cookie.codeVerifier, nonce: cookie.nonce },
    now,
    SIGN_IN_LIFETIME_MS,
  );
}

/** Opens a flow cookie's value; throws FlowTokenError. */
export async function openFlowCookie(
  cookieSecret: Uint8Array,
  sealed: string,
  now: number,
): Promise<FlowCookie> {
  const purpose = 'flow-cookie';
  const payload = await open(cookieSecret, purpose, sealed, now);
  return {
    flowId: textField(purpose, payload, 'fid'),
    csrf: textField(purpose, payload, 'csrf'),
    codeVerifier: textField(purpose, payload, 'pkce'),
    nonce: textField(purpose, payload, 'nonce'),
  };
}

/** Seals a handoff (shared_secret), valid HANDOFF_LIFETIME_MS. */
export function sealHandoff(
  sharedSecret: Uint8Array,
  handoff: Omit<Handoff, 'expiresAt'>,
  now: number,
): Promise<string> {
  const payload: JWTPayload = { h: handoff.handle, url: handoff.url, jti: handoff.jti };
  if (handoff.programmaticRedirect !== undefined) payload.redirect = handoff.programmaticRedirect;
  return seal(sharedSecret, 'handoff', payload, now, HANDOFF_LIFETIME_MS);
}

/** Opens a handoff; throws FlowTokenError (single use is the caller's ReplayGuard claim). */
export async function openHandoff(sharedSecret: Uint8Array, sealed: string, now: number): Promise<Handoff> {
  const purpose = 'handoff';
  const payload = await open(sharedSecret, purpose, sealed, now);
  return {
    handle: textField(purpose, payload, 'h'),
    url: textField(purpose, payload, 'url'),
    programmaticRedirect: optionalTextField(purpose, payload, 'redirect'),
    jti: textField(purpose, payload, 'jti'),
    expiresAt: expiry(payload),
  };
}

/** Seals a programmatic-login request (shared_secret), valid PROGRAMMATIC_LIFETIME_MS. */
export function sealProgrammaticRequest(
  sharedSecret: Uint8Array,
  request: Omit<ProgrammaticLink, 'expiresAt'>,
  now: number,
): Promise<string> {
  return seal(
    sharedSecret,
    'programmatic-request',
    { origin: request.origin, redirect: request.redirectUri, idp: request.idpId, jti: request.jti },
    now,
    PROGRAMMATIC_LIFETIME_MS,
  );
}

/**
 * Opens a programmatic-login request; throws FlowTokenError (single use is the caller's
 * ReplayGuard claim of `jti`).
 */
export async function openProgrammaticRequest(
  sharedSecret: Uint8Array,
  sealed: string,
  now: number,
): Promise<ProgrammaticLink> {
  const purpose = 'programmatic-request';
  const payload = await open(sharedSecret, purpose, sealed, now);
  return {
    origin: textField(purpose, payload, 'origin'),
    redirectUri: textField(purpose, payload, 'redirect'),
    idpId: textField(purpose, payload, 'idp'),
    jti: textField(purpose, payload, 'jti'),
    expiresAt: expiry(payload),
  };
}

export { FlowTokenError };
