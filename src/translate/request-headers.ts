import { hasTemplate, literalHeaderValue, parseHeaderValue } from '../config/header-templates.js';
import type { RouteSettings } from '../config/types.js';
import type { IRHeaderPart, IRRoute } from '../ir/types.js';

/**
 * A route's header changes in IR terms: `set_request_headers` split into what Envoy sets as is
 * (literal values, `$${` unescaped) and what authorize fills in per request from the session
 * (values with templates, by lower-case name, kept out of Envoy's static headers so no token is
 * ever in the route table; none on a route that does not `forwards`: parse warned that they do not
 * apply there), `remove` as given, and `set_response_headers` as literals (validation refused templates).
 */
export function routeHeaders(
  settings: Pick<RouteSettings, 'set_request_headers' | 'set_response_headers'>,
  remove: readonly string[],
  forwards: boolean,
): Pick<
  IRRoute,
  'requestHeadersToSet' | 'requestHeaderTemplates' | 'requestHeadersToRemove' | 'responseHeadersToSet'
> {
  const literal: Record<string, string> = {};
  const templates: Record<string, readonly IRHeaderPart[]> = {};
  for (const [name, value] of Object.entries(settings.set_request_headers)) {
    const parsed = parseHeaderValue(value);
    if (parsed.error === undefined && hasTemplate(parsed.parts)) templates[name.toLowerCase()] = parsed.parts;
    else literal[name] = literalHeaderValue(value);
  }
  return {
    requestHeadersToSet: literal,
    ...(Object.keys(templates).length === 0 || !forwards ? {} : { requestHeaderTemplates: templates }),
    requestHeadersToRemove: remove,
    responseHeadersToSet: literalHeaders(settings.set_response_headers),
  };
}

/** `headers` with each value's `$${` unescaped to `${` (values without templates). */
export function literalHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, literalHeaderValue(value)]),
  );
}
