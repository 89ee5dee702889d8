import { publicSuffixParse } from './public-suffix.js';
import type { WeightedUrl } from './types.js';
import type { Reader } from './value-readers.js';

const HTTP_TO_SCHEMES = ['http:', 'https:', 'h2c:'];

/** A validated `from`: the URL and whether the route proxies HTTP or tunnels TCP. */
export interface ParsedFrom {
  readonly url: URL;
  readonly kind: 'http' | 'tcp';
}

/**
 * Validates a route's `from`: an absolute http(s) URL with a host, optional port and `*` wildcards
 * in the host, and no path, query or fragment; or, for a TCP tunnel, `tcp+https://host:port` (also
 * `tcp+http`; the host:port clients CONNECT to) or the bastion form
 * `tcp+https://bastion.example.com[:port]/target:port` (one path segment: the CONNECT authority;
 * the URL's host is only where clients dial). TCP hosts take no wildcards. A path on an HTTP route
 * gets the exact message operators know from the peer, so they find the fix (`prefix`) with a
 * search engine too.
 */
export function parseFrom(reader: Reader, path: string, raw: unknown): ParsedFrom | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (text.trim() === '') return reader.problem(path, 'is required: a URL such as https://app.example.com');
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    const hint = /^[^:/]+(:\d+)?(\/|$)/.test(text.trim())
      ? '; have you specified the scheme (https://)?'
      : '';
    return reader.problem(
      path,
      `"${text}" is not a URL with a scheme and host (for example https://app.example.com)${hint}`,
    );
  }
  const tcp = url.protocol === 'tcp+https:' || url.protocol === 'tcp+http:';
  if (!tcp && url.protocol !== 'http:' && url.protocol !== 'https:') {
    return reader.problem(
      path,
      `"${text}" has scheme ${url.protocol.slice(0, -1)}; use https (or tcp+https for TCP routes)`,
    );
  }
  if (url.hostname === '') return reader.problem(path, `"${text}" has no host`);
  if (url.username !== '' || url.password !== '')
    return reader.problem(path, `"${text}" must not carry user credentials`);
  const hostProblem = fromHostProblem(url);
  if (hostProblem !== undefined) return reader.problem(path, `"${text}": ${hostProblem}`);
  if (tcp) return checkTcpFrom(reader, path, text, url);
  if (url.pathname !== '/' && url.pathname !== '') {
    return reader.problem(
      path,
      `config: policy source url (${url.href}) contains a path, but it should be set using the path field instead`,
    );
  }
  if (url.search !== '' || url.hash !== '')
    return reader.problem(path, `"${text}" must not have a query or fragment`);
  return { url, kind: 'http' };
}

/**
 * Why a `from` host cannot be matched as the operator meant, or undefined. A trailing dot never
 * matches (Envoy compares the Host header as sent); port 0 is no port a client can use; a `*`
 * stands for whole labels only (`a*.example.com` would be an RE2 over part of a label); and a
 * trailing wildcard after a registrable name (`app.example.com.*`) also matches names anyone can
 * register (`app.example.com.evil.test`), to which sign-in would then hand sessions.
 */
function fromHostProblem(url: URL): string | undefined {
  const host = url.hostname;
  if (host.endsWith('.')) return 'the host must not end with a dot; write it without one';
  if (url.port === '0') return 'port 0 is not a port clients can connect to';
  if (!host.includes('*')) return undefined;
  if (host.split('.').some((label) => label.includes('*') && label !== '*'))
    return 'a `*` wildcard stands for whole labels only (*.example.com, a.*.example.com), not part of one';
  if (host.endsWith('.*')) {
    const fixed = host.slice(0, -2).replace(/^(\*\.)+/, '');
    const suffix = publicSuffixParse(fixed);
    if (
      !fixed.includes('*') &&
      suffix.domain !== null &&
      (suffix.isIcann === true || suffix.isPrivate === true)
    )
      return `a trailing wildcard after the registrable name ${suffix.domain} also matches names anyone can register (${fixed}.evil.example); list the hosts instead`;
  }
  return undefined;
}

/**
 * The `host:port` a TCP route's clients CONNECT to (lower case), from a `from` URL `parseFrom`
 * accepted: the bastion form's path segment, else the URL's own host and port.
 */
export function connectAuthority(from: URL): { readonly host: string; readonly port: number } {
  const segment = from.pathname.replace(/^\/|\/$/g, '');
  const target = segment === '' ? from : new URL(`tcp://${decodeURIComponent(segment)}`);
  return { host: target.hostname.toLowerCase(), port: Number(target.port) };
}

const TCP_FORMS = 'tcp+https://host:port, or tcp+https://bastion-host/target:port';

/** The TCP forms of `from` (see parseFrom): no query, no wildcard, a port on the CONNECT authority. */
function checkTcpFrom(reader: Reader, path: string, text: string, url: URL): ParsedFrom | undefined {
  if (url.search !== '' || url.hash !== '')
    return reader.problem(path, `"${text}" must not have a query or fragment`);
  const segment = url.pathname.replace(/^\/|\/$/g, '');
  if (segment === '' && url.port === '')
    return reader.problem(path, `"${text}": a TCP route needs the port clients connect to (${TCP_FORMS})`);
  if (url.hostname.includes('*'))
    return reader.problem(path, `"${text}": a TCP route's host cannot be a wildcard`);
  if (segment === '') return { url, kind: 'tcp' };
  let target: URL | undefined;
  try {
    target = new URL(`tcp://${decodeURIComponent(segment)}`);
  } catch {
    target = undefined;
  }
  const bare =
    target !== undefined && target.pathname === '' && target.search === '' && target.username === '';
  if (target === undefined || !bare || target.hostname === '' || segment.includes('/'))
    return reader.problem(
      path,
      `"${text}": the path of a bastion TCP route is the one target clients CONNECT to (${TCP_FORMS})`,
    );
  if (target.port === '')
    return reader.problem(path, `"${text}": the bastion target needs a port (${TCP_FORMS})`);
  if (target.hostname.includes('*'))
    return reader.problem(path, `"${text}": a TCP route's target cannot be a wildcard`);
  return { url, kind: 'tcp' };
}

/**
 * Validates a route's `to`: one URL or a list, each optionally weighted with a `,N` suffix. Weights
 * are all-or-nothing and never zero (Envoy's load_balancing_weight must be at least 1). HTTP routes
 * take http, https and h2c destinations; TCP routes take tcp:// destinations only. An HTTP route
 * may have an empty list (with a warning): it keeps its cluster, with no endpoints, and answers 503
 * until destinations are added, which then arrive over EDS alone. A Kubernetes Service with no
 * ready endpoints gives this, so scaling it from zero never renames its route or cluster.
 */
export function parseTo(
  reader: Reader,
  path: string,
  raw: unknown,
  kind: 'http' | 'tcp' = 'http',
): WeightedUrl[] | undefined {
  const items = typeof raw === 'string' ? [raw] : raw;
  if (kind === 'http' && Array.isArray(items) && items.length === 0) {
    reader.warn(path, 'has no destinations: the route answers 503 (no healthy upstream) until it has some');
    return [];
  }
  if (!Array.isArray(items) || items.length === 0) {
    return reader.problem(path, 'is required: one destination URL or a list of them');
  }
  const before = reader.problems.length;
  const parsed: WeightedUrl[] = [];
  items.forEach((item, index) => {
    const itemPath = Array.isArray(raw) ? `${path}[${index}]` : path;
    const destination = parseWeightedUrl(reader, itemPath, item, kind);
    if (destination !== undefined) parsed.push(destination);
  });
  const weighted = parsed.filter((destination) => destination.weight !== undefined).length;
  if (weighted !== 0 && weighted !== parsed.length) {
    reader.problem(
      path,
      'either no weights should be provided, or all endpoints must have non-zero weight specified',
    );
  }
  return reader.problems.length === before ? parsed : undefined;
}

function parseWeightedUrl(
  reader: Reader,
  path: string,
  raw: unknown,
  kind: 'http' | 'tcp',
): WeightedUrl | undefined {
  if (typeof raw === 'number') {
    return reader.problem(
      path,
      `${raw} is not a URL; in a [flow list] YAML splits "url,weight" at the comma, so quote it: "http://a:8080,${raw}"`,
    );
  }
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  const weightMatch = /,\s*(-?\d+)\s*$/.exec(text);
  let weight: number | undefined;
  let urlText = text;
  if (weightMatch !== null) {
    weight = Number(weightMatch[1]);
    urlText = text.slice(0, weightMatch.index);
    if (weight === 0) return reader.problem(path, `zero load balancing weight not permitted ("${text}")`);
    if (weight < 0 || weight > 4_294_967_295)
      return reader.problem(path, `weight must be 1 to 4294967295 ("${text}")`);
  } else if (text.includes(',')) {
    return reader.problem(
      path,
      `"${text}": a weight is written as a whole number after the last comma (http://a:8080,3)`,
    );
  }
  let url: URL;
  try {
    url = new URL(urlText.trim());
  } catch {
    return reader.problem(
      path,
      `"${urlText}" is not a URL with a scheme and host (for example http://app.internal:8080)`,
    );
  }
  if (kind === 'tcp' && url.protocol !== 'tcp:') {
    return reader.problem(
      path,
      `"${urlText}": a tcp+https:// route takes tcp:// destinations only (tcp://host:port)`,
    );
  }
  if (kind === 'http' && url.protocol === 'tcp:') {
    return reader.problem(
      path,
      `"${urlText}": tcp:// destinations need a TCP route (from: tcp+https://host:port)`,
    );
  }
  if (kind === 'http' && !HTTP_TO_SCHEMES.includes(url.protocol)) {
    return reader.problem(
      path,
      `"${urlText}" has scheme ${url.protocol.slice(0, -1)}; use http, https or h2c (HTTP/2 without TLS)`,
    );
  }
  if (url.hostname === '') return reader.problem(path, `"${urlText}": endpoint hostname must be specified`);
  if (url.username !== '' || url.password !== '')
    return reader.problem(
      path,
      `"${urlText}" must not carry user credentials (they would be logged and shown as the route's destination); send them with set_request_headers (Authorization) instead`,
    );
  if (url.hostname.includes('*'))
    return reader.problem(path, `"${urlText}": a destination host cannot be a wildcard`);
  if (kind === 'tcp' && url.port === '')
    return reader.problem(path, `"${urlText}": a tcp:// destination needs a port`);
  const protocol = url.protocol;
  const port = url.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(url.port);
  // A URL of a scheme the URL standard does not know (h2c://host:port) has an empty path: the root.
  const pathname = url.pathname === '' ? '/' : url.pathname;
  return { url, weight, href: url.href, protocol, hostname: url.hostname, port, pathname };
}
