/**
 * HTTPRoute rule filters -> route keys: RequestHeaderModifier `set`/`remove` ->
 * `set_request_headers`/`remove_request_headers`; ResponseHeaderModifier `set` ->
 * `set_response_headers`; URLRewrite hostname -> `host_rewrite`, path ReplaceFullPath -> a regex
 * rewrite of the whole path, ReplacePrefixMatch -> the prefix rewrite (route-assembly.ts applies it
 * to each half of an element-wise prefix); RequestRedirect -> `redirect`. Header `add` (Portcullis
 * sets, it does not append), a header naming the user's identity-provider tokens (tokenHeader in
 * annotations.ts), other filter types and ReplacePrefixMatch in a redirect are problems naming the
 * filter, never dropped.
 */
import { tokenHeader, tokenHeaderMessage } from './annotations.js';
import type { HTTPRouteFilter } from './objects.js';

/** The keys a rule's filters set, the prefix replacement, and the problems (`where` below the filter list). */
export interface FilterKeys {
  readonly keys: Record<string, unknown>;
  readonly prefixReplacement: string | undefined;
  readonly problems: { readonly where: string; readonly message: string }[];
}

/** Reads `filters` (at `where`, such as `spec.rules[0].filters`). */
export function readFilters(filters: readonly HTTPRouteFilter[], where: string): FilterKeys {
  const keys: Record<string, unknown> = {};
  const problems: FilterKeys['problems'] = [];
  let prefixReplacement: string | undefined;
  filters.forEach((filter, index) => {
    const at = `${where}[${index}]`;
    const problem = (field: string, message: string): void => {
      problems.push({ where: `${at}${field}`, message });
    };
    switch (filter.type) {
      case 'RequestHeaderModifier': {
        const modifier = filter.requestHeaderModifier ?? {};
        if ((modifier.add ?? []).length > 0)
          problem(
            '.requestHeaderModifier.add',
            'add is not supported (Portcullis replaces headers); use set',
          );
        const headers = Object.fromEntries((modifier.set ?? []).map((header) => [header.name, header.value]));
        const token = tokenHeader(headers);
        if (token !== undefined) problem('.requestHeaderModifier.set', tokenHeaderMessage(token));
        if (modifier.set !== undefined) keys.set_request_headers = headers;
        if (modifier.remove !== undefined) keys.remove_request_headers = [...modifier.remove];
        break;
      }
      case 'ResponseHeaderModifier': {
        const modifier = filter.responseHeaderModifier ?? {};
        if ((modifier.add ?? []).length > 0 || (modifier.remove ?? []).length > 0)
          problem('.responseHeaderModifier', 'only set is supported for response headers');
        if (modifier.set !== undefined)
          keys.set_response_headers = Object.fromEntries(
            modifier.set.map((header) => [header.name, header.value]),
          );
        break;
      }
      case 'URLRewrite': {
        const rewrite = filter.urlRewrite ?? {};
        if (rewrite.hostname !== undefined) keys.host_rewrite = rewrite.hostname;
        if (rewrite.path?.type === 'ReplaceFullPath') {
          keys.regex_rewrite_pattern = '^.*$';
          keys.regex_rewrite_substitution = rewrite.path.replaceFullPath ?? '/';
        } else if (rewrite.path?.type === 'ReplacePrefixMatch') {
          prefixReplacement = rewrite.path.replacePrefixMatch ?? '/';
        }
        break;
      }
      case 'RequestRedirect': {
        const redirect = filter.requestRedirect ?? {};
        if (redirect.path?.type === 'ReplacePrefixMatch')
          problem(
            '.requestRedirect.path',
            'ReplacePrefixMatch is not supported in a redirect; use ReplaceFullPath',
          );
        keys.redirect = Object.fromEntries(
          Object.entries({
            scheme_redirect: redirect.scheme,
            host_redirect: redirect.hostname,
            port_redirect: redirect.port,
            path_redirect:
              redirect.path?.type === 'ReplaceFullPath' ? redirect.path.replaceFullPath : undefined,
            response_code: redirect.statusCode ?? 302,
          }).filter(([, value]) => value !== undefined),
        );
        break;
      }
      default:
        problem('.type', `${filter.type} filters are not supported`);
    }
  });
  return { keys, prefixReplacement, problems };
}
