/**
 * What a route that answers by itself answers (config `redirect` or `response`), in Portcullis's
 * own terms: compile turns it into Envoy's redirect or direct-response action in place of a
 * forwarding one. Such a route has no cluster.
 */

/** A redirect: each part of the request URL is kept unless a field replaces it. */
export interface IRRedirect {
  readonly kind: 'redirect';
  /** `https_redirect: true`: the scheme becomes https. */
  readonly httpsRedirect: boolean;
  /** `scheme_redirect`: the scheme becomes this (never together with httpsRedirect). */
  readonly scheme: string | undefined;
  readonly host: string | undefined;
  readonly port: number | undefined;
  /** The whole path replaced (`path_redirect`), or the matched prefix replaced (`prefix_rewrite`). */
  readonly path: { readonly kind: 'replace' | 'prefix'; readonly value: string } | undefined;
  readonly code: 301 | 302 | 303 | 307 | 308;
  /** Drop the request's query string. */
  readonly stripQuery: boolean;
}

/** A fixed answer: this status and body (text, at most config's MAX_RESPONSE_BODY_BYTES). */
export interface IRDirectResponse {
  readonly kind: 'response';
  readonly status: number;
  readonly body: string;
}

/** A route's own answer. */
export type IRAnswer = IRRedirect | IRDirectResponse;
