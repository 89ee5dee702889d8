// The in-process harness for the client tests: a ClientIo with its own streams, config directory
// (token cache) and fake browser, and helpers to seed and read the token cache.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { ClientIo } from '../../../src/cli/run.js';
import { fakeBrowser } from '../../support/fake-connect-server.js';
import type { FakePortcullis } from '../../support/fake-connect-server.js';

export const ROUTE = 'db.example.test';
export const TARGET = `${ROUTE}:5432`;

export interface Harness {
  readonly io: ClientIo;
  readonly stdin: PassThrough;
  readonly stdout: PassThrough;
  readonly stderr: () => string;
  readonly abort: () => void;
  readonly configHome: string;
  readonly visits: string[];
}

export function harness(
  t: { after(fn: () => void): void },
  fake: FakePortcullis,
  options: { browser?: boolean } = {},
): Harness {
  const configHome = mkdtempSync(join(tmpdir(), 'portcullis-client-'));
  t.after(() => rmSync(configHome, { recursive: true, force: true }));
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const controller = new AbortController();
  const visits: string[] = [];
  return {
    io: {
      stdin,
      stdout,
      stderr,
      env: { XDG_CONFIG_HOME: configHome, HOME: configHome },
      signal: controller.signal,
      ...(options.browser === false ? {} : { openBrowser: fakeBrowser(fake, visits) }),
      signInTimeoutMs: 10_000,
    },
    stdin,
    stdout,
    stderr: () => text,
    abort: () => controller.abort(),
    configHome,
    visits,
  };
}

export function seedToken(configHome: string, host: string, token: string): void {
  mkdirSync(join(configHome, 'portcullis'), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(configHome, 'portcullis', 'tokens.json'),
    JSON.stringify({ version: 1, tokens: { [host]: { token, saved_at: new Date().toISOString() } } }),
    { mode: 0o600 },
  );
}

export function cachedToken(configHome: string, host: string): string | undefined {
  const parsed = JSON.parse(readFileSync(join(configHome, 'portcullis', 'tokens.json'), 'utf8')) as {
    tokens: Record<string, { token: string }>;
  };
  return parsed.tokens[host]?.token;
}

/** Collects `stream` until it ends. */
export async function drain(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
