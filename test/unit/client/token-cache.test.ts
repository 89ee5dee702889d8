// The client's token cache: per route host, in $XDG_CONFIG_HOME/portcullis/tokens.json (or
// ~/.config), directory 0700 and file 0600, replaced atomically (a new file renamed over the old).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cacheKey, fileTokenCache, tokenCachePath } from '../../../src/cli/token-cache.js';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-tokens-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('the cache lives under XDG_CONFIG_HOME, or ~/.config when it is unset or relative', () => {
  assert.equal(tokenCachePath({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/u'), '/x/cfg/portcullis/tokens.json');
  assert.equal(tokenCachePath({}, '/home/u'), '/home/u/.config/portcullis/tokens.json');
  assert.equal(
    tokenCachePath({ XDG_CONFIG_HOME: 'rel/cfg' }, '/home/u'),
    '/home/u/.config/portcullis/tokens.json',
  );
  assert.equal(tokenCachePath({ XDG_CONFIG_HOME: '' }, '/home/u'), '/home/u/.config/portcullis/tokens.json');
});

test('the key is the route host, with its port unless 443', () => {
  assert.equal(cacheKey(new URL('https://App.Example.com')), 'app.example.com');
  assert.equal(cacheKey(new URL('https://app.example.com:443')), 'app.example.com');
  assert.equal(cacheKey(new URL('https://app.example.com:8443')), 'app.example.com:8443');
});

test('tokens are kept per host; deleting one keeps the others', async (t) => {
  const path = join(tempDir(t), 'cfg', 'portcullis', 'tokens.json');
  const cache = fileTokenCache(path);
  assert.equal(await cache.get('a.example.com'), undefined, 'no file is an empty cache');
  await cache.put('a.example.com', 'token-a');
  await cache.put('b.example.com', 'token-b');
  await cache.put('a.example.com', 'token-a2');
  assert.equal(await cache.get('a.example.com'), 'token-a2');
  assert.equal(await cache.get('b.example.com'), 'token-b');
  await cache.delete('a.example.com');
  assert.equal(await cache.get('a.example.com'), undefined);
  assert.equal(await fileTokenCache(path).get('b.example.com'), 'token-b', 'a second reader sees the file');
});

test('the directory is 0700 and the file 0600, also when they existed with wider modes', async (t) => {
  const base = tempDir(t);
  const dir = join(base, 'portcullis');
  const path = join(dir, 'tokens.json');
  await fileTokenCache(path).put('a.example.com', 'secret');
  assert.equal(statSync(dir).mode & 0o777, 0o700);
  assert.equal(statSync(path).mode & 0o777, 0o600);

  rmSync(dir, { recursive: true });
  mkdirSync(dir, { mode: 0o755 });
  writeFileSync(path, '{"version":1,"tokens":{}}', { mode: 0o644 });
  await fileTokenCache(path).put('a.example.com', 'secret');
  assert.equal(statSync(dir).mode & 0o777, 0o700, 'an existing directory is narrowed to 0700');
  assert.equal(statSync(path).mode & 0o777, 0o600, 'an existing file is replaced by a 0600 one');
});

test('a write replaces the file by rename and leaves no temporary file behind', async (t) => {
  const dir = join(tempDir(t), 'portcullis');
  const path = join(dir, 'tokens.json');
  const cache = fileTokenCache(path);
  await cache.put('a.example.com', 'one');
  const before = statSync(path).ino;
  await cache.put('b.example.com', 'two');
  assert.notEqual(statSync(path).ino, before, 'the file was rewritten in place, not replaced');
  assert.deepEqual(readdirSync(dir), ['tokens.json']);
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { tokens: Record<string, { token: string }> };
  assert.equal(parsed.tokens['a.example.com']?.token, 'one');
  assert.equal(parsed.tokens['b.example.com']?.token, 'two');
});

test('a malformed cache file is an empty cache, and the next write repairs it', async (t) => {
  const dir = join(tempDir(t), 'portcullis');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'tokens.json');
  writeFileSync(path, '{not json');
  const cache = fileTokenCache(path);
  assert.equal(await cache.get('a.example.com'), undefined);
  await cache.put('a.example.com', 'fresh');
  assert.equal(await cache.get('a.example.com'), 'fresh');
});
