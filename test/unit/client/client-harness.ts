// The in-process harness for the client tests: a ClientIo with its own streams, config directory
// (token cache) and fake browser, and helpers to seed and read the token cache.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before } from 'node:test';
import type { ClientIo, TcpArgs } from '../../../src/cli/run.js';
import { fakeBrowser, startEchoServer, startFakePortcullis } from '../../support/fake-connect-server.js';
import type { FakePortcullis } from '../../support/fake-connect-server.js';
import { generateTestCertificate, type TestCertificate } from '../../support/test-certs.js';

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

/** The stand-in for Envoy a describe block shares: its certificate, the fake Portcullis, an echo target. */
export interface StandIn {
  readonly cert: TestCertificate;
  readonly fake: FakePortcullis;
  readonly echo: Awaited<ReturnType<typeof startEchoServer>>;
  /** `portcullis tcp` arguments to TARGET through the fake, trusting its certificate. */
  args(extra?: Partial<TcpArgs>): TcpArgs;
}

/**
 * Registers before/after hooks in the current describe block that start (and stop) a fake
 * Portcullis with a certificate for ROUTE and an echo server behind TARGET; read the parts from the
 * returned object inside tests.
 */
export function useStandIn(): StandIn {
  let parts: {
    cert: TestCertificate;
    fake: FakePortcullis;
    echo: Awaited<ReturnType<typeof startEchoServer>>;
  };
  before(async () => {
    const cert = generateTestCertificate(ROUTE);
    const fake = await startFakePortcullis(cert.certPem, cert.keyPem);
    const echo = await startEchoServer();
    fake.upstreams.set(TARGET, echo.port);
    parts = { cert, fake, echo };
  });
  after(async () => {
    await parts.fake.close();
    parts.echo.server.close();
  });
  return {
    get cert() {
      return parts.cert;
    },
    get fake() {
      return parts.fake;
    },
    get echo() {
      return parts.echo;
    },
    args: (extra = {}) => ({
      target: TARGET,
      via: `https://127.0.0.1:${parts.fake.port}`,
      browser: true,
      caCert: parts.cert.certFile,
      insecureSkipVerify: false,
      ...extra,
    }),
  };
}
