import type { RouteSettings } from '../config/types.js';
import type { IRAnswer } from '../ir/answer.js';
import type { IRResponseHeaderRewrite } from '../ir/types.js';

/** Envoy's redirect code when `response_code` is unset (its MOVED_PERMANENTLY), as the peer sends. */
const DEFAULT_REDIRECT_CODE = 301;

/**
 * The answer of a route that answers by itself, as an `{ answer }` field to spread into its IR
 * route, or `{}` for a route that forwards (so the IR route carries no `answer` key at all). A
 * redirect keeps every part of the URL its settings do not replace, with code 301 unless
 * `response_code` says otherwise; a response is its status and body as given. Pure.
 */
export function routeAnswer(settings: RouteSettings): { answer: IRAnswer } | Record<string, never> {
  const { redirect, response } = settings;
  if (response !== undefined)
    return { answer: { kind: 'response', status: response.status, body: response.body } };
  if (redirect === undefined) return {};
  return {
    answer: {
      kind: 'redirect',
      httpsRedirect: redirect.https_redirect === true,
      scheme: redirect.scheme_redirect,
      host: redirect.host_redirect,
      port: redirect.port_redirect,
      path:
        redirect.path_redirect !== undefined
          ? { kind: 'replace', value: redirect.path_redirect }
          : redirect.prefix_rewrite !== undefined
            ? { kind: 'prefix', value: redirect.prefix_rewrite }
            : undefined,
      code: redirect.response_code ?? DEFAULT_REDIRECT_CODE,
      stripQuery: redirect.strip_query === true,
    },
  };
}

/** Whether the route forwards to upstreams (and so has a cluster): neither `redirect` nor `response`. */
export function forwards(settings: RouteSettings): boolean {
  return settings.redirect === undefined && settings.response === undefined;
}

/**
 * The route's `rewrite_response_headers` as an `{ responseHeaderRewrites }` field to spread into
 * its IR route (header names lower-cased, order kept), or `{}` when it has none or does not
 * forward: a route that answers by itself has no upstream response to rewrite (its rules were a
 * warning at parse).
 */
export function responseHeaderRewrites(
  settings: RouteSettings,
): { responseHeaderRewrites: IRResponseHeaderRewrite[] } | Record<string, never> {
  const rules = settings.rewrite_response_headers;
  if (rules === undefined || !forwards(settings)) return {};
  return {
    responseHeaderRewrites: rules.map(({ header, prefix, value }) => ({
      header: header.toLowerCase(),
      prefix,
      value,
    })),
  };
}
