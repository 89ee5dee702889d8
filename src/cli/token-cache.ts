/**
 * The client's token cache: the session tokens `portcullis login` and `portcullis tcp` received,
 * one per route host, in `$XDG_CONFIG_HOME/portcullis/tokens.json` (`~/.config` when the variable
 * is unset or not absolute, as the XDG base-directory spec says). A token is a bearer credential,
 * so the directory is 0700, the file 0600, and every write is a new file renamed over the old one
 * (a reader never sees half a file; a crash leaves the previous cache). Tokens are never printed.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';

/** Tokens by route host (`URL.host`: the host name, with the port unless it is 443). */
export interface TokenCache {
  /** The cached token for `host`, or undefined (no cache file, no entry, or an unreadable file). */
  get(host: string): Promise<string | undefined>;
  /** Stores `token` for `host`, keeping the other hosts' tokens. */
  put(host: string, token: string): Promise<void>;
  /** Forgets `host`'s token (after the server refused it). */
  delete(host: string): Promise<void>;
}

interface CacheFile {
  readonly version: 1;
  readonly tokens: Record<string, { readonly token: string; readonly saved_at: string }>;
}

/**
 * Where the cache lives for this environment: `$XDG_CONFIG_HOME/portcullis/tokens.json`, or
 * `<home>/.config/portcullis/tokens.json` when XDG_CONFIG_HOME is unset, empty or relative.
 */
export function tokenCachePath(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  const configured = env.XDG_CONFIG_HOME;
  const base = configured !== undefined && isAbsolute(configured) ? configured : join(home, '.config');
  return join(base, 'portcullis', 'tokens.json');
}

/** The cache key for a route origin such as `https://app.example.com`: its host, lower-cased. */
export function cacheKey(origin: URL): string {
  return origin.host.toLowerCase();
}

/**
 * A TokenCache over the file at `path`. Stateless: every call reads the file, so two clients
 * running at once see each other's logins (a concurrent write of another host's token can be lost:
 * the last rename wins, and that client signs in again).
 */
export function fileTokenCache(path: string, now: () => Date = () => new Date()): TokenCache {
  const update = async (change: (tokens: CacheFile['tokens']) => void): Promise<void> => {
    const tokens = { ...(await readCache(path)).tokens };
    change(tokens);
    await writeAtomically(path, `${JSON.stringify({ version: 1, tokens } satisfies CacheFile, null, 2)}\n`);
  };
  return {
    async get(host) {
      return (await readCache(path)).tokens[host]?.token;
    },
    put: (host, token) =>
      update((tokens) => {
        tokens[host] = { token, saved_at: now().toISOString() };
      }),
    delete: (host) =>
      update((tokens) => {
        delete tokens[host];
      }),
  };
}

/** The parsed cache; an absent, unreadable or malformed file is an empty cache (it is only a cache). */
async function readCache(path: string): Promise<CacheFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return { version: 1, tokens: {} };
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const tokens = (parsed as { tokens?: unknown } | null)?.tokens;
    if (typeof tokens !== 'object' || tokens === null) return { version: 1, tokens: {} };
    const valid = Object.entries(tokens).filter(
      (entry): entry is [string, { token: string; saved_at: string }] =>
        typeof (entry[1] as { token?: unknown } | null)?.token === 'string',
    );
    return { version: 1, tokens: Object.fromEntries(valid) };
  } catch {
    return { version: 1, tokens: {} };
  }
}

/**
 * Writes `text` to `path` as a fresh 0600 file beside it, flushed, then renamed over `path`. The
 * directory is created 0700 (and set to 0700 when it already existed, since it holds secrets).
 */
async function writeAtomically(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temp = join(dir, `.tokens.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const file = await open(temp, 'wx', 0o600);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
