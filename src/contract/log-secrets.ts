import type { SecretNames } from '../shared/redact.js';
import { SESSION_COOKIE, ASSERTION_HEADER } from './authz.js';
import { CSRF_PARAM, HANDOFF_PARAM, JWT_PARAM, OWN_SESSION_HEADER, PROGRAMMATIC_PARAM } from './endpoints.js';
import { GRPC_CREDENTIAL_METADATA_KEY } from './grpc-credential.js';
import { DECISION_CLAIMS } from './fast-path.js';

/**
 * Headers and query parameters whose values are credentials, masked in every line Portcullis
 * forwards from Envoy or grpc-js (shared/redact.ts): the gRPC credential and `Authorization:
 * Portcullis` session handles, cookies (session and sign-in flow cookies), the assertion and own
 * session-handle headers; the OAuth `code` and `state`, OIDC tokens, and Portcullis's handoff,
 * session token, sealed programmatic request and CSRF token. `SESSION_COOKIE` is listed as a
 * parameter too, for a `_portcullis=<handle>` printed outside a cookie header. And the decision
 * token's assertion claim (`ja`) where Envoy dumps jwt_authn's verified payload from dynamic
 * metadata (the fast path's shadow RBAC does at debug).
 */
export const LOG_SECRET_NAMES: SecretNames = {
  headers: [
    GRPC_CREDENTIAL_METADATA_KEY,
    'proxy-authorization',
    'cookie',
    'set-cookie',
    ASSERTION_HEADER,
    OWN_SESSION_HEADER,
  ],
  params: [
    'code',
    'state',
    'id_token',
    'access_token',
    'refresh_token',
    'token',
    HANDOFF_PARAM,
    JWT_PARAM,
    PROGRAMMATIC_PARAM,
    CSRF_PARAM,
    SESSION_COOKIE,
  ],
  fields: [DECISION_CLAIMS.assertion],
};
