/**
 * Reads `databroker_storage_connection_string` into the deployment it names, with WHATWG URL (no
 * hand parsing of its parts; see splitUrl): one server (`redis://`, `rediss://` for TLS, `?db=N` or a `/N` path for the
 * database), Sentinel (`redis+sentinel://` or `redis-sentinel://host:port,host:port/<master>`,
 * `rediss+sentinel://` for TLS) or Cluster (`redis+cluster://host:port,host:port`,
 * `rediss+cluster://` for TLS). `user:password@` gives the credentials of the data nodes. Every
 * error names the setting and shows the URL with its password replaced, never the password.
 */

/** Where the Redis servers are and how to log in; host lists keep their given order. */
export type RedisTarget =
  | ({
      readonly kind: 'single';
      readonly host: string;
      readonly port: number;
      readonly database: number;
    } & Common)
  | ({ readonly kind: 'sentinel'; readonly master: string; readonly nodes: readonly RedisNode[] } & Common)
  | ({ readonly kind: 'cluster'; readonly nodes: readonly RedisNode[] } & Common);

/** One `host:port` of a Sentinel or Cluster list. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

interface Common {
  readonly tls: boolean;
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** The connection string with its password replaced by `***`, for logs and errors. */
  readonly display: string;
}

const SETTING = 'databroker_storage_connection_string';
const DEFAULT_PORT = 6379;
const DEFAULT_SENTINEL_PORT = 26379;
const SCHEMES: Readonly<Record<string, { kind: RedisTarget['kind']; tls: boolean }>> = {
  'redis:': { kind: 'single', tls: false },
  'rediss:': { kind: 'single', tls: true },
  'redis+sentinel:': { kind: 'sentinel', tls: false },
  'redis-sentinel:': { kind: 'sentinel', tls: false },
  'rediss+sentinel:': { kind: 'sentinel', tls: true },
  'redis+cluster:': { kind: 'cluster', tls: false },
  'redis-cluster:': { kind: 'cluster', tls: false },
  'rediss+cluster:': { kind: 'cluster', tls: true },
};

/** A connection string that does not name a Redis deployment; `reason` says why without the URL. */
export class RedisUrlError extends RangeError {
  constructor(
    readonly reason: string,
    display: string,
  ) {
    super(`${SETTING}: ${reason} (${display})`);
    this.name = 'RedisUrlError';
  }
}

/**
 * Parses a Redis connection string. Throws a RedisUrlError naming
 * `databroker_storage_connection_string` (and never the password) for an unknown scheme, a missing
 * host, a bad port, a bad `db`, or a Sentinel URL without its master name. Config validation
 * reports its `reason` (the URL is secret); the backend logs the message (password redacted).
 */
export function parseRedisConnectionString(text: string): RedisTarget {
  const display = redactRedisUrl(text);
  let split: ReturnType<typeof splitUrl>;
  try {
    split = splitUrl(text);
  } catch {
    throw new RedisUrlError('is not a URL', display);
  }
  const { url, hosts } = split;
  const fail = (why: string): never => {
    throw new RedisUrlError(why, display);
  };
  const scheme = SCHEMES[url.protocol];
  if (scheme === undefined) {
    return fail(`unknown scheme ${url.protocol}; use ${Object.keys(SCHEMES).join(' ')}`);
  }
  const common: Common = {
    tls: scheme.tls,
    username: url.username === '' ? undefined : decodeURIComponent(url.username),
    password: url.password === '' ? undefined : decodeURIComponent(url.password),
    display,
  };
  const nodes = hosts.map((host) =>
    readHost(host, scheme.kind === 'sentinel' ? DEFAULT_SENTINEL_PORT : DEFAULT_PORT, fail),
  );
  const [first] = nodes;
  if (first === undefined) return fail('no host');
  if (scheme.kind === 'single') {
    if (nodes.length > 1) return fail('several hosts need redis+sentinel:// or redis+cluster://');
    return { kind: 'single', ...first, database: databaseOf(url, fail), ...common };
  }
  if (scheme.kind === 'cluster') return { kind: 'cluster', nodes, ...common };
  const master = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (master === '' || master.includes('/')) return fail('a Sentinel URL ends with /<master name>');
  return { kind: 'sentinel', master, nodes, ...common };
}

/** The URL with its password replaced by `***`, or `(not a URL)`: safe to log. */
export function redactRedisUrl(text: string): string {
  try {
    const { url, hosts } = splitUrl(text);
    if (url.password !== '') url.password = '***';
    return url.href.replace(PLACEHOLDER, hosts.join(','));
  } catch {
    return '(not a URL)';
  }
}

/** Stands in for the host list while WHATWG URL reads the rest. */
const PLACEHOLDER = 'hosts.invalid';

/**
 * Sentinel and Cluster URLs list several `host:port`s, which no URL grammar allows, so the host
 * list (between the userinfo's `@` and the path) is cut out and replaced by a placeholder; URL
 * reads the rest (scheme, credentials, path, query) and each host is read as its own URL.
 */
function splitUrl(text: string): { url: URL; hosts: string[] } {
  const parts = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(text);
  if (parts === null) throw new RangeError(`${SETTING}: not a redis URL (scheme://host...)`);
  const [, scheme = '', authority = '', rest = ''] = parts;
  const at = authority.lastIndexOf('@');
  const hostText = authority.slice(at + 1);
  let url: URL;
  try {
    url = new URL(`${scheme}${authority.slice(0, at + 1)}${PLACEHOLDER}${rest}`);
  } catch {
    throw new RangeError(`${SETTING}: not a redis URL (scheme://host...)`);
  }
  return { url, hosts: hostText === '' ? [] : hostText.split(',') };
}

function readHost(text: string, defaultPort: number, fail: (why: string) => never): RedisNode {
  let node: URL;
  try {
    node = new URL(`redis://${text}`);
  } catch {
    return fail(`bad host ${JSON.stringify(text)}`);
  }
  if (node.hostname === '' || node.pathname !== '' || node.username !== '' || node.password !== '') {
    return fail(`bad host ${JSON.stringify(text)}`);
  }
  const host = node.hostname.replace(/^\[(.*)\]$/, '$1');
  return { host, port: node.port === '' ? defaultPort : Number(node.port) };
}

function databaseOf(url: URL, fail: (why: string) => never): number {
  const fromPath = url.pathname.replace(/^\//, '');
  const fromQuery = url.searchParams.get('db');
  if (fromPath !== '' && fromQuery !== null && fromPath !== fromQuery) {
    return fail('the database is given twice (path and ?db=)');
  }
  const text = fromQuery ?? fromPath;
  if (text === '') return 0;
  if (!/^\d{1,5}$/.test(text)) return fail(`db must be a number, got ${JSON.stringify(text)}`);
  return Number(text);
}
