import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { GRPC_CREDENTIAL_SECRET_NAME } from '../../src/contract/grpc-credential.js';
import { freePort, freePortPair } from './ports.js';
import { SIGN_IN } from './sign-in-config.js';
import { waitFor } from './wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A Portcullis running as its own process (the real command), so a crash is a crash. */
export interface PortcullisProcess {
  readonly child: ChildProcess;
  readonly grpcPort: number;
  /** Envoy's listener on 127.0.0.1 (nothing listens there with `withoutEnvoy`). */
  readonly proxyPort: number;
  readonly configPath: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** True while the process has neither exited nor been killed. */
  alive(): boolean;
  /** SIGTERM, wait for the exit, remove the temp dir. */
  stop(): Promise<void>;
}

/**
 * Runs `src/cmd/main.ts --config <file>` (with `--without-envoy` when asked) on free loopback
 * ports, `config` giving the routes and options (sign-in settings default to `SIGN_IN`), and resolves once it serves: Envoy ready, or the
 * gRPC port listening without Envoy.
 */
export async function spawnPortcullis(
  config: Record<string, unknown>,
  options: { withoutEnvoy?: boolean; fdLimit?: number } = {},
): Promise<PortcullisProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-process-'));
  const configPath = join(dir, 'config.yaml');
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  writeFileSync(
    configPath,
    stringify({
      insecure_server: true,
      ...SIGN_IN,
      ...config,
      address: `127.0.0.1:${proxyPort}`,
      grpc_address: `127.0.0.1:${grpcPort}`,
      envoy_admin_address: `127.0.0.1:${adminPort}`,
    }),
  );
  const args = ['--import', 'tsx', 'src/cmd/main.ts', '--config', configPath];
  if (options.withoutEnvoy === true) args.push('--without-envoy');
  // prlimit execs the command, so `child.pid` is Portcullis's own.
  const child =
    options.fdLimit === undefined
      ? spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('prlimit', [`--nofile=${options.fdLimit}`, process.execPath, ...args], {
          cwd: REPO,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const running: PortcullisProcess = {
    child,
    grpcPort,
    proxyPort,
    configPath,
    output: () => output,
    alive,
    async stop() {
      if (alive()) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const ready = options.withoutEnvoy === true ? 'gRPC listening' : 'ready: Envoy is serving routes';
  try {
    await waitFor(
      async () => {
        if (!alive()) throw new Error(`Portcullis exited: ${output}`);
        return output.includes(ready);
      },
      { what: `Portcullis to log "${ready}"`, timeoutMs: 30_000 },
    );
  } catch (err) {
    await running.stop();
    throw err;
  }
  return running;
}

/**
 * The gRPC credential of a spawned all-in-one Portcullis. It is random per start (issue 33 item
 * 9) and held only by the process and its supervised Envoy, so a test that must speak to the gRPC
 * port as Envoy does reads it from that Envoy's bootstrap file (named on its command line, in a
 * directory only this user can read), found through /proc.
 */
export function supervisedEnvoyCredential(portcullisPid: number): string {
  const children = readFileSync(`/proc/${portcullisPid}/task/${portcullisPid}/children`, 'utf8')
    .trim()
    .split(/\s+/);
  for (const pid of children) {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const flag = argv.findIndex((arg) => arg === '-c' || arg === '--config-path');
    const path = argv[flag + 1];
    if (flag === -1 || path === undefined) continue;
    const bootstrap = JSON.parse(readFileSync(path, 'utf8')) as {
      static_resources?: {
        secrets?: { name: string; generic_secret?: { secret?: { inline_string?: string } } }[];
      };
    };
    const secret = bootstrap.static_resources?.secrets?.find(
      (entry) => entry.name === GRPC_CREDENTIAL_SECRET_NAME,
    );
    const value = secret?.generic_secret?.secret?.inline_string;
    if (value !== undefined) return value.replace(/^Bearer /, '');
  }
  throw new Error(`no supervised Envoy of process ${portcullisPid} holds a gRPC credential`);
}
