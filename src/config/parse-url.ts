import type { WeightedUrl } from './types.js';
import type { Reader } from './value-readers.js';

const FROM_SCHEMES = ['http:', 'https:'];
const TO_SCHEMES = ['http:', 'https:', 'h2c:'];

/**
 * Validates a route's `from`: an absolute http(s) URL with a host, optional port and `*` wildcards
 * in the host, and no path, query or fragment. A path gets the exact message operators know from
 * Pomerium, so they find the fix (`prefix`) from their search engine too.
 */
export function parseFrom(reader: Reader, path: string, raw: unknown): URL | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (text.trim() === '') return reader.problem(path, 'is required: a URL such as https://app.example.com');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return reader.problem(path, `"${text}" is not a URL with a scheme and host (for example https://app.example.com)`);
  }
  if (url.protocol.startsWith('tcp+')) {
    return reader.problem(path, `"${text}": TCP routes (tcp+https://) are not supported by this version yet`);
  }
  if (!FROM_SCHEMES.includes(url.protocol)) {
    return reader.problem(path, `"${text}" has scheme ${url.protocol.slice(0, -1)}; use http or https`);
  }
  if (url.hostname === '') return reader.problem(path, `"${text}" has no host`);
  if (url.username !== '' || url.password !== '') return reader.problem(path, `"${text}" must not carry user credentials`);
  if (url.pathname !== '/' && url.pathname !== '') {
    return reader.problem(
      path,
      `config: policy source url (${url.href}) contains a path, but it should be set using the path field instead`,
    );
  }
  if (url.search !== '' || url.hash !== '') return reader.problem(path, `"${text}" must not have a query or fragment`);
  return url;
}

/**
 * Validates a route's `to`: one URL or a list, each optionally weighted with a `,N` suffix. Weights
 * are all-or-nothing and never zero (Envoy's load_balancing_weight must be at least 1).
 */
export function parseTo(reader: Reader, path: string, raw: unknown): WeightedUrl[] | undefined {
  const items = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(items) || items.length === 0) {
    return reader.problem(path, 'is required: one destination URL or a list of them');
  }
  const before = reader.problems.length;
  const parsed: WeightedUrl[] = [];
  items.forEach((item, index) => {
    const itemPath = Array.isArray(raw) ? `${path}[${index}]` : path;
    const destination = parseWeightedUrl(reader, itemPath, item);
    if (destination !== undefined) parsed.push(destination);
  });
  const weighted = parsed.filter((destination) => destination.weight !== undefined).length;
  if (weighted !== 0 && weighted !== parsed.length) {
    reader.problem(path, 'either no weights should be provided, or all endpoints must have non-zero weight specified');
  }
  return reader.problems.length === before ? parsed : undefined;
}

function parseWeightedUrl(reader: Reader, path: string, raw: unknown): WeightedUrl | undefined {
  if (typeof raw === 'number') {
    return reader.problem(path, `${raw} is not a URL; in a [flow list] YAML splits "url,weight" at the comma, so quote it: "http://a:8080,${raw}"`);
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
    if (weight < 0 || weight > 4_294_967_295) return reader.problem(path, `weight must be 1 to 4294967295 ("${text}")`);
  } else if (text.includes(',')) {
    return reader.problem(path, `"${text}": a weight is written as a whole number after the last comma (http://a:8080,3)`);
  }
  let url: URL;
  try {
    url = new URL(urlText.trim());
  } catch {
    return reader.problem(path, `"${urlText}" is not a URL with a scheme and host (for example http://app.internal:8080)`);
  }
  if (!TO_SCHEMES.includes(url.protocol)) {
    return reader.problem(path, `"${urlText}" has scheme ${url.protocol.slice(0, -1)}; use http, https or h2c (HTTP/2 without TLS)`);
  }
  if (url.hostname === '') return reader.problem(path, `"${urlText}": endpoint hostname must be specified`);
  if (url.hostname.includes('*')) return reader.problem(path, `"${urlText}": a destination host cannot be a wildcard`);
  return { url, weight };
}
