import { describe, isPlainObject, type Reader } from './value-readers.js';

/** RFC 9110 token: what an HTTP header name may contain. */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Headers a claim must never be written to: routing (`host`), credentials (`authorization`,
 * `cookie`), hop-by-hop and framing headers, and Envoy's own `x-envoy-*` control headers. A
 * claim there would let an identity claim steer routing or impersonate a credential.
 */
const RESERVED_HEADERS = new Set([
  'host',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'upgrade',
  'keep-alive',
]);

/** Whether `header` is reserved (see RESERVED_HEADERS), in any letter case. */
export function isReservedHeader(header: string): boolean {
  const name = header.toLowerCase();
  return RESERVED_HEADERS.has(name) || name.startsWith('x-envoy-') || name.startsWith(':');
}

/** The header a listed claim is sent in: `email` -> `X-Portcullis-Claim-Email`. */
export function claimHeaderName(claim: string): string {
  const words = claim.split(/[-_.]/).filter((word) => word !== '');
  return ['X', 'Portcullis', 'Claim', ...words.map((word) => word[0]?.toUpperCase() + word.slice(1))].join(
    '-',
  );
}

/**
 * `jwt_claims_headers`: which session claims go upstream as headers. Accepts a list of claims
 * (`[email, groups]`), a string of them separated by commas or spaces (env, properties), or a map
 * of header name to claim (`{X-Email: email}`; in env a JSON object). Returns header -> claim.
 * Invalid header names and nested values are errors at their key path.
 */
export function readClaimsHeaders(
  reader: Reader,
  path: string,
  raw: unknown,
): Record<string, string> | undefined {
  let value = raw;
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      value = JSON.parse(value);
    } catch {
      return reader.problem(path, 'looks like a JSON map but does not parse; write {"X-Header": "claim"}');
    }
  }
  if (typeof value === 'string') value = value.split(/[\s,]+/).filter((claim) => claim !== '');
  const before = reader.problems.length;
  const out: Record<string, string> = {};
  if (Array.isArray(value)) {
    value.forEach((claim, index) => {
      if (typeof claim !== 'string' || claim.trim() === '') {
        reader.problem(`${path}[${index}]`, `expected a claim name, got ${describe(claim)}`);
        return;
      }
      const header = claimHeaderName(claim.trim());
      if (!HEADER_NAME.test(header)) {
        reader.problem(
          `${path}[${index}]`,
          `claim "${claim}" cannot form a header name; use the map form {X-Header: ${claim}}`,
        );
      } else {
        out[header] = claim.trim();
      }
    });
  } else if (isPlainObject(value)) {
    for (const [header, claim] of Object.entries(value)) {
      if (!HEADER_NAME.test(header))
        reader.problem(`${path}.${header}`, `has invalid header name "${header}"`);
      else if (isReservedHeader(header))
        reader.problem(
          `${path}.${header}`,
          `"${header}" is a header the proxy or upstream trusts for routing or credentials (host, authorization, cookie, x-envoy-*, ...); choose another name, such as X-Portcullis-Claim-${header}`,
        );
      if (typeof claim !== 'string' || claim.trim() === '') {
        reader.problem(`${path}.${header}`, `expected a claim name, got ${describe(claim)}`);
      } else {
        out[header] = claim.trim();
      }
    }
  } else {
    return reader.problem(
      path,
      `expected a list of claims or a map of header name to claim, got ${describe(raw)}`,
    );
  }
  return reader.problems.length === before ? out : undefined;
}
