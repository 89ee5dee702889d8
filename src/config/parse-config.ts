import type { Problem } from '../shared/errors.js';
import { GLOBAL_OPTIONS, envName, type OptionSpec } from './option-table.js';
import { parseRoute, type ReadText } from './parse-route.js';
import type { Config, RouteSettings } from './types.js';
import { closestKey, isPlainObject, Reader } from './value-readers.js';
import { parseDurationMs } from './duration.js';

/** What parsing returns: a Config when there were no problems, plus every problem and warning. */
export interface ParseResult {
  readonly config: Config | undefined;
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
}

export interface ParseInput {
  /** The parsed config document (YAML/JSON), or {} when there is no file. */
  readonly document: unknown;
  /** Environment variables; they win over the file. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly readText: ReadText;
}

const KNOWN_KEYS = GLOBAL_OPTIONS.map((option) => option.key);

/**
 * Turns a config document plus environment into a validated Config. Precedence: environment
 * variable, then file, then the option table's default. Every problem is collected with its key
 * path; nothing half-parsed is returned. Pure apart from `readText`, which reads referenced files.
 */
export function parseConfig(input: ParseInput): ParseResult {
  const reader = new Reader();
  const document = input.document ?? {};
  if (!isPlainObject(document)) {
    reader.problem('', 'the config file must hold a map of options at the top level');
    return { config: undefined, problems: reader.problems, warnings: reader.warnings };
  }
  for (const key of Object.keys(document)) {
    if (!KNOWN_KEYS.includes(key)) {
      const hint = closestKey(key, KNOWN_KEYS);
      reader.warn(key, `unknown option, ignored${hint === undefined ? '' : ` (did you mean ${hint}?)`}`);
    }
  }
  const values = new Map<string, unknown>();
  for (const option of GLOBAL_OPTIONS) {
    const fromEnv = input.env[envName(option.key)];
    const raw = fromEnv !== undefined && fromEnv !== '' ? fromEnv : (document[option.key] ?? option.default);
    if (raw === undefined || option.kind.type === 'routes') continue;
    values.set(option.key, readOption(reader, option, raw, input.readText));
  }
  const routes = readRoutes(reader, document, input);
  const get = <T>(key: string): T => values.get(key) as T;
  const certificates = readCertificates(reader, get);
  if (get<boolean>('insecure_server') !== true && certificates.length === 0) {
    reader.problem(
      'certificate',
      'no TLS certificate is configured: set certificate and certificate_key (or certificate_file and certificate_key_file), or set insecure_server: true to serve plain HTTP',
    );
  }
  if (reader.problems.length > 0) return { config: undefined, problems: reader.problems, warnings: reader.warnings };
  const config: Config = {
    address: get('address'),
    insecure_server: get('insecure_server'),
    use_proxy_protocol: get('use_proxy_protocol'),
    xff_num_trusted_hops: get('xff_num_trusted_hops'),
    log_level: get('log_level'),
    grpc_address: get('grpc_address'),
    envoy_admin_address: get('envoy_admin_address'),
    default_upstream_timeout_ms: get('default_upstream_timeout'),
    timeout_read_ms: get('timeout_read'),
    timeout_idle_ms: get('timeout_idle'),
    ...(values.has('set_response_headers') ? { set_response_headers: get('set_response_headers') } : {}),
    certificates,
    routes,
  };
  return { config, problems: [], warnings: reader.warnings };
}

function readOption(reader: Reader, option: OptionSpec, raw: unknown, readText: ReadText): unknown {
  const kind = option.kind;
  switch (kind.type) {
    case 'string':
      return reader.string(option.key, raw);
    case 'address':
      return readAddress(reader, option.key, raw);
    case 'bool':
      return reader.bool(option.key, raw);
    case 'int':
      return reader.integer(option.key, raw, kind.min, kind.max);
    case 'duration':
      return reader.duration(option.key, raw);
    case 'enum':
      return reader.oneOf(option.key, raw, kind.values);
    case 'string_map':
      return reader.stringMap(option.key, raw);
    case 'file_text': {
      const file = reader.string(option.key, raw);
      if (file === undefined) return undefined;
      try {
        return readText(file);
      } catch (err) {
        return reader.problem(option.key, `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    case 'routes':
      return undefined;
  }
}

/** `host:port` or `:port` (all interfaces); the port must be 1..65535. */
function readAddress(reader: Reader, key: string, raw: unknown): string | undefined {
  const text = reader.string(key, raw);
  if (text === undefined) return undefined;
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]*):(\d{1,5})$/.exec(text.trim());
  if (match === null || Number(match[2]) < 1 || Number(match[2]) > 65535) {
    return reader.problem(key, `"${text}" is not an address; write host:port or :port (for example :443 or 127.0.0.1:8080)`);
  }
  return text.trim();
}

function readRoutes(reader: Reader, document: Record<string, unknown>, input: ParseInput): RouteSettings[] {
  const routes: RouteSettings[] = [];
  for (const key of ['policy', 'routes'] as const) {
    let raw = document[key];
    const fromEnv = input.env[envName(key)];
    if (fromEnv !== undefined && fromEnv !== '') raw = decodeEnvRoutes(reader, key, fromEnv);
    if (raw === undefined || raw === null) continue;
    if (key === 'policy') reader.warn('policy', 'the `policy` key is deprecated; rename it to `routes`');
    if (!Array.isArray(raw)) {
      reader.problem(key, 'expected a list of routes');
      continue;
    }
    raw.forEach((route, index) => {
      const parsed = parseRoute(reader, `${key}[${index}]`, route, input.readText);
      if (parsed !== undefined) routes.push(parsed);
    });
  }
  return routes;
}

/** Routes in an environment variable are JSON, or base64-encoded YAML/JSON as Pomerium accepts. */
function decodeEnvRoutes(reader: Reader, key: string, text: string): unknown {
  const candidates = [text, Buffer.from(text, 'base64').toString('utf8')];
  for (const candidate of candidates) {
    try {
      return JSON.parse(candidate);
    } catch {
      // try the next form
    }
  }
  return reader.problem(envName(key), 'expected a JSON list of routes (or base64 of one)');
}

function readCertificates(reader: Reader, get: <T>(key: string) => T): { certPem: string; keyPem: string }[] {
  const out: { certPem: string; keyPem: string }[] = [];
  const pairs: [string, string, boolean][] = [
    ['certificate', 'certificate_key', true],
    ['certificate_file', 'certificate_key_file', false],
  ];
  for (const [certKey, keyKey, base64] of pairs) {
    const cert = get<string | undefined>(certKey);
    const key = get<string | undefined>(keyKey);
    if (cert === undefined && key === undefined) continue;
    if (cert === undefined || key === undefined) {
      reader.problem(cert === undefined ? certKey : keyKey, `is required together with ${cert === undefined ? keyKey : certKey}`);
      continue;
    }
    const decode = (text: string): string => (base64 ? Buffer.from(text, 'base64').toString('utf8') : text);
    const certPem = decode(cert);
    const keyPem = decode(key);
    if (!certPem.includes('-----BEGIN CERTIFICATE-----')) reader.problem(certKey, 'does not contain a PEM certificate');
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyPem)) reader.problem(keyKey, 'does not contain a PEM private key');
    out.push({ certPem, keyPem });
  }
  return out;
}

/** Exposed for the option reference: the default of an option in milliseconds, when a duration. */
export function defaultDurationMs(key: string): number | undefined {
  const option = GLOBAL_OPTIONS.find((candidate) => candidate.key === key);
  return option?.default === undefined ? undefined : parseDurationMs(option.default);
}
