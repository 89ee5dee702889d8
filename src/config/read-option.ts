import { isIP } from 'node:net';
import type { OptionSpec } from './option-table.js';
import { findRemoved, removedMessage } from './removed-options.js';
import { readClaimsHeaders } from './parse-claims-headers.js';
import { readBytes32, readPem, readSigningKey } from './parse-keys.js';
import { Secret } from '../shared/secret.js';
import { readFileOption, type RawValue, type ReadText } from './sources.js';
import { describe, type Reader } from './value-readers.js';

/**
 * Reads one option's raw value according to its kind in the option table, recording a problem
 * (at the key or environment variable it came from) when it does not fit. A value from a typed
 * document must already have the kind's type; text (env, properties, defaults) is converted (see
 * ValueSyntax). Secret kinds never echo their value. Returns undefined for a problem, or for kinds read elsewhere (routes,
 * certificates lists, named identity providers and `_file` options).
 */
export function readOption(reader: Reader, option: OptionSpec, raw: RawValue, readText: ReadText): unknown {
  const { path, value, syntax } = raw;
  const kind = option.kind;
  switch (kind.type) {
    case 'string': {
      const text = reader.string(path, value);
      if (text === undefined || kind.pattern === undefined || kind.pattern.test(text)) return text;
      return reader.problem(path, `${describe(text)} ${kind.hint ?? 'has the wrong form'}`);
    }
    case 'url_path':
      return readUrlPath(reader, path, value);
    case 'url':
      return readUrl(reader, path, value, kind.https);
    case 'address':
      return readAddress(reader, path, value);
    case 'bool':
      return reader.bool(path, value, syntax);
    case 'int':
      return reader.integer(path, value, kind.min, kind.max, syntax);
    case 'number':
      return reader.number(path, value, kind.min, kind.max, syntax);
    case 'duration':
      return reader.duration(path, value);
    case 'enum': {
      const why = refusedValue(value, kind.refused);
      if (why !== undefined) return reader.problem(path, `${describe(value)} ${why}`);
      return reader.oneOf(path, value, kind.values, kind.aliases);
    }
    case 'enum_list':
      return readEnumList(reader, path, value, kind.values);
    case 'string_list':
      return readStringList(reader, path, value, kind);
    case 'string_map':
      return reader.stringMap(path, value);
    case 'claims_headers':
      return readClaimsHeaders(reader, path, value);
    case 'secret_bytes32':
      return readBytes32(reader, path, value);
    case 'secret_string': {
      const text = reader.secret(path, value);
      if (text === undefined) return undefined;
      return text.trim() === '' ? reader.problem(path, 'is empty') : new Secret(text);
    }
    case 'signing_key':
      return readSigningKey(reader, path, value);
    case 'pem':
      return readPem(reader, path, value, kind.what);
    case 'pem_file': {
      const text = readFileOption(reader, raw, readText);
      return text === undefined ? undefined : readPem(reader, path, text, kind.what);
    }
    case 'file':
    case 'certificates':
    case 'identity_providers':
    case 'routes':
      return undefined;
  }
}

/** The message for a refused enum value (compared as oneOf compares: trimmed, any case). */
function refusedValue(
  value: unknown,
  refused: Readonly<Record<string, string>> | undefined,
): string | undefined {
  if (typeof value !== 'string' || refused === undefined) return undefined;
  const wanted = value.trim().toLowerCase();
  return Object.hasOwn(refused, wanted) ? refused[wanted] : undefined;
}

/** `host:port` or `:port` (all interfaces); the port must be 1..65535. */
export function readAddress(reader: Reader, path: string, raw: unknown): string | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]*):(\d{1,5})$/.exec(text.trim());
  if (match === null || Number(match[2]) < 1 || Number(match[2]) > 65535) {
    return reader.problem(
      path,
      `"${text}" is not an address; write host:port or :port (for example :443 or 127.0.0.1:8080)`,
    );
  }
  return text.trim();
}

/** True for `localhost` and loopback IP literals, where plain http is acceptable. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * An absolute http(s) URL with a host. With `https: 'required'` plain http is accepted only for
 * loopback hosts (local development); credentials in the URL are rejected.
 */
export function readUrl(
  reader: Reader,
  path: string,
  raw: unknown,
  https: 'required' | 'optional',
): URL | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (text.trim() === '')
    return reader.problem(path, 'is empty; give a URL such as https://auth.example.com');
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return reader.problem(
      path,
      `"${text}" is not a URL with a scheme and host (for example https://auth.example.com)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return reader.problem(path, `"${text}" has scheme ${url.protocol.slice(0, -1)}; use https`);
  }
  if (url.hostname === '') return reader.problem(path, `"${text}" has no host`);
  if (url.username !== '' || url.password !== '') return reader.problem(path, 'must not carry credentials');
  if (https === 'required' && url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    return reader.problem(path, `"${text}" must use https (plain http is allowed only for localhost)`);
  }
  return url;
}

function readUrlPath(reader: Reader, path: string, raw: unknown): string | undefined {
  const text = reader.string(path, raw);
  if (text === undefined) return undefined;
  if (!/^\/[^\s?#]*$/.test(text))
    return reader.problem(path, `"${text}" must be a URL path starting with "/"`);
  return text;
}

function readStringList(
  reader: Reader,
  path: string,
  raw: unknown,
  kind: Extract<OptionSpec['kind'], { type: 'string_list' }>,
): string[] | undefined {
  const items = reader.stringList(path, raw);
  if (items === undefined) return undefined;
  if (kind.nonEmpty === true && items.length === 0)
    return reader.problem(path, 'is empty; remove it to use the default');
  const bad = kind.item === undefined ? [] : items.filter((item) => kind.item?.valid(item) !== true);
  for (const item of bad) reader.problem(path, `${describe(item)} ${kind.item?.hint ?? ''}`);
  return bad.length === 0 ? items : undefined;
}

function readEnumList(
  reader: Reader,
  path: string,
  raw: unknown,
  allowed: readonly string[],
): string[] | undefined {
  const items = reader.stringList(path, raw);
  if (items === undefined) return undefined;
  if (items.length === 0) return reader.problem(path, `is empty; use one or more of ${allowed.join(', ')}`);
  const before = reader.problems.length;
  const out: string[] = [];
  for (const item of items) {
    const found = allowed.find((name) => name === item.trim().toLowerCase());
    const removed = findRemoved(item.trim().toLowerCase(), 'service');
    if (found === undefined && removed !== undefined) {
      reader.problem(path, removedMessage(removed, `the "${item.trim()}" service`));
    } else if (found === undefined) {
      reader.problem(path, `${describe(item)} is not one of ${allowed.join(', ')}`);
    } else if (!out.includes(found)) {
      out.push(found);
    }
  }
  return reader.problems.length === before ? out : undefined;
}
