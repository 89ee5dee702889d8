import { HEADER_NAME } from './parse-claims-headers.js';
import { checkRequestHeaderTemplates, refuseResponseHeaderTemplates } from './header-templates.js';
import {
  IDENTITY_HEADER_NAMES,
  IDENTITY_HEADER_PREFIXES,
  isIdentityHeader,
} from '../shared/identity-headers.js';
import { dropUndefined } from './parse-health-check.js';
import { readAccess } from './parse-route-extras.js';
import { readRedirect, readResponse, warnInapplicableKeys } from './parse-route-answer.js';
import { readMatching } from './parse-route-matching.js';
import { readResponseHeaderRewrites } from './parse-response-rewrites.js';
import { readUpstream } from './parse-route-upstream.js';
import { parseFrom, parseTo } from './parse-url.js';
import { findRemoved, removedMessage } from './removed-options.js';
import { ROUTE_KEYS } from './route-option-table.js';
import type { ReadText } from './sources.js';
import type { RouteSettings } from './types.js';
import { closestKey, isPlainObject, type Reader } from './value-readers.js';
import { routeFields, type RouteFields } from './route-fields.js';

/**
 * Validates one route (`routes[i]`) into RouteSettings, recording every problem with its key path.
 * Returns undefined when the route has problems; the caller rejects the whole config then.
 */
export function parseRoute(
  reader: Reader,
  path: string,
  raw: unknown,
  readText: ReadText,
): RouteSettings | undefined {
  if (!isPlainObject(raw)) return reader.problem(path, 'expected a route map with at least `from` and `to`');
  const before = reader.problems.length;
  checkRouteKeys(reader, path, raw);
  const fields = routeFields(reader, path, raw);
  const from =
    raw.from === undefined
      ? reader.problem(fields.at('from'), 'is required')
      : parseFrom(reader, fields.at('from'), raw.from);
  const route = dropUndefined({
    kind: from?.kind,
    from: from?.url,
    from_href: from?.url.href,
    from_host: from?.url.hostname.toLowerCase(),
    ...readDestinations(reader, path, raw, from?.kind ?? 'http'),
    name: fields.str('name'),
    ...readMatching(reader, path, fields, from?.kind ?? 'http'),
    ...readUpstream(reader, path, fields, readText),
    ...readRequestHandling(reader, path, fields),
    ...readAccess(reader, path, raw),
    source_path: path,
  });
  checkHeaderNames(reader, path, route);
  return reader.problems.length === before ? (route as unknown as RouteSettings) : undefined;
}

/** Timeouts, websockets, header changes and the Host header. */
function readRequestHandling(reader: Reader, path: string, fields: RouteFields): Record<string, unknown> {
  const { raw, at } = fields;
  const setRequestHeaders: Readonly<Record<string, string>> =
    raw.set_request_headers === undefined
      ? {}
      : (reader.stringMap(at('set_request_headers'), raw.set_request_headers) ?? {});
  const setResponseHeaders: Readonly<Record<string, string>> =
    raw.set_response_headers === undefined
      ? {}
      : (reader.stringMap(at('set_response_headers'), raw.set_response_headers) ?? {});
  checkRequestHeaderTemplates(
    reader,
    at('set_request_headers'),
    setRequestHeaders,
    [true, 'true'].includes(raw.allow_public_unauthenticated_access as boolean | string),
  );
  refuseResponseHeaderTemplates(reader, at('set_response_headers'), setResponseHeaders);
  return {
    timeout_ms: fields.duration('timeout'),
    idle_timeout_ms: fields.duration('idle_timeout'),
    allow_websockets: fields.bool('allow_websockets'),
    set_request_headers: Object.fromEntries(
      Object.entries(setRequestHeaders).filter(([name]) => name.toLowerCase() !== 'host'),
    ),
    remove_request_headers:
      raw.remove_request_headers === undefined
        ? []
        : (reader.stringList(at('remove_request_headers'), raw.remove_request_headers) ?? []),
    pass_request_identity_headers: readIdentityPass(reader, at('pass_request_identity_headers'), raw),
    set_response_headers: setResponseHeaders,
    rewrite_response_headers: readResponseHeaderRewrites(
      reader,
      at('rewrite_response_headers'),
      raw.rewrite_response_headers,
    ),
    preserve_host_header: fields.bool('preserve_host_header'),
    host_rewrite: checkHostRewrite(
      reader,
      path,
      fields.str('host_rewrite'),
      setRequestHeaders,
      fields.bool('preserve_host_header'),
    ),
  };
}

/**
 * Unknown route keys are errors with a did-you-mean hint (a misspelled key would silently drop
 * what it says, such as a restriction); removed ones (allowed_groups) name their replacement.
 */
function checkRouteKeys(reader: Reader, path: string, raw: Record<string, unknown>): void {
  for (const key of Object.keys(raw)) {
    if (ROUTE_KEYS.includes(key)) continue;
    const removed = findRemoved(key, 'route');
    if (removed !== undefined) {
      reader.problem(`${path}.${key}`, removedMessage(removed));
    } else {
      const hint = closestKey(key, ROUTE_KEYS);
      reader.problem(
        `${path}.${key}`,
        `unknown route option${hint === undefined ? '; remove it' : ` (did you mean ${hint}?)`}`,
      );
    }
  }
}

/** Exactly one of `to`, `redirect` and `response` says what the route does. */
function readDestinations(
  reader: Reader,
  path: string,
  raw: Record<string, unknown>,
  kind: 'http' | 'tcp',
): Record<string, unknown> {
  const given = (['to', 'redirect', 'response'] as const).filter(
    (key) => raw[key] !== undefined && raw[key] !== null,
  );
  if (given.length === 0)
    return { to: reader.problem(`${path}.to`, 'is required (or give redirect or response instead)') };
  if (given.length > 1)
    return {
      to: reader.problem(
        `${path}.${given[given.length - 1] ?? 'to'}`,
        `set only one of ${given.join(' and ')}: a route either forwards, redirects or responds`,
      ),
    };
  if (kind === 'tcp' && given[0] !== 'to')
    return {
      to: reader.problem(
        `${path}.${given[0]}`,
        'a TCP route forwards to tcp:// destinations; redirect and response do not apply',
      ),
    };
  if (given[0] === 'redirect' || given[0] === 'response') warnInapplicableKeys(reader, path, raw, given[0]);
  if (kind === 'tcp') warnInapplicableKeys(reader, path, raw, undefined);
  if (given[0] === 'redirect')
    return { to: [], redirect: readRedirect(reader, `${path}.redirect`, raw.redirect) };
  if (given[0] === 'response')
    return { to: [], response: readResponse(reader, `${path}.response`, raw.response) };
  return { to: parseTo(reader, `${path}.to`, raw.to, kind) };
}

function checkHostRewrite(
  reader: Reader,
  path: string,
  hostRewrite: string | undefined,
  setHeaders: Record<string, string>,
  preserve: boolean,
): string | undefined {
  const hostHeader = Object.entries(setHeaders).find(([name]) => name.toLowerCase() === 'host')?.[1];
  const sources = [hostRewrite !== undefined, hostHeader !== undefined, preserve].filter(Boolean).length;
  if (sources > 1)
    reader.problem(path, 'set only one of host_rewrite, set_request_headers.Host and preserve_host_header');
  return hostRewrite ?? hostHeader;
}

/**
 * `pass_request_identity_headers`: header names, each one the identity strip removes
 * (shared/identity-headers.ts), lower-cased; undefined when unset or empty. A name the strip does
 * not remove would pass anyway, so it is an error rather than a silent no-op.
 */
function readIdentityPass(reader: Reader, path: string, raw: Record<string, unknown>): string[] | undefined {
  if (raw.pass_request_identity_headers === undefined || raw.pass_request_identity_headers === null)
    return undefined;
  const names = reader.stringList(path, raw.pass_request_identity_headers) ?? [];
  for (const [index, name] of names.entries()) {
    if (!HEADER_NAME.test(name)) reader.problem(`${path}[${index}]`, `"${name}" is not a valid header name`);
    else if (!isIdentityHeader(name))
      reader.problem(
        `${path}[${index}]`,
        `"${name}" is not an identity header Portcullis strips (${[...IDENTITY_HEADER_NAMES, ...IDENTITY_HEADER_PREFIXES.map((prefix) => `${prefix}*`)].join(', ')}); it reaches the upstream already, remove it`,
      );
  }
  const lower = [...new Set(names.map((name) => name.toLowerCase()))];
  return lower.length === 0 ? undefined : lower;
}

function checkHeaderNames(reader: Reader, path: string, route: Record<string, unknown>): void {
  for (const key of ['set_request_headers', 'set_response_headers']) {
    for (const [name, value] of Object.entries(route[key] as Record<string, string>)) {
      if (!HEADER_NAME.test(name)) reader.problem(`${path}.${key}.${name}`, 'is not a valid header name');
      if (/[\r\n\0]/.test(value))
        reader.problem(`${path}.${key}.${name}`, 'value must not contain CR, LF or NUL');
    }
  }
  for (const [index, name] of (route.remove_request_headers as string[]).entries()) {
    if (!HEADER_NAME.test(name))
      reader.problem(`${path}.remove_request_headers[${index}]`, `"${name}" is not a valid header name`);
  }
}
