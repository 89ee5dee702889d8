/**
 * What the authorize service decided for one request, independent of how it reaches Envoy.
 * `reasons` say why (for logs and the error page); they never contain secrets.
 */
export type Decision =
  | {
      readonly kind: 'allow';
      /** Headers set on the upstream request (overwriting any client-supplied copy). */
      readonly setHeaders: readonly (readonly [string, string])[];
      /** Headers removed from the upstream request. */
      readonly removeHeaders: readonly string[];
      /**
       * Headers added to the response the client gets, beside the upstream's own (appended, never
       * overwriting: an upstream's Set-Cookie is kept). The fast path's decision-token cookie.
       */
      readonly responseHeaders?: readonly (readonly [string, string])[];
      readonly reasons: readonly string[];
      /** Who is signed in, when a session allowed it: Envoy's access log shows it (ext_authz dynamic metadata). */
      readonly user?: { readonly id: string; readonly email: string | undefined };
    }
  | {
      readonly kind: 'deny';
      /** HTTP status for the client: 302 (sign in), 401, 403, 404, 503, ... */
      readonly status: number;
      readonly headers: readonly (readonly [string, string])[];
      readonly body: string;
      readonly reasons: readonly string[];
    };

/** The parts of a request the authorize service looks at, decoded once from the CheckRequest. */
export interface AuthorizeRequest {
  readonly routeId: string | undefined;
  readonly requestId: string;
  readonly method: string;
  readonly scheme: string;
  /** `:authority` as Envoy saw it. */
  readonly host: string;
  /** Path without query string or fragment. */
  readonly path: string;
  readonly query: string;
  /** Lower-cased header names; repeated headers joined by Envoy with a comma. */
  readonly headers: Readonly<Record<string, string>>;
  readonly sourceIp: string;
}
