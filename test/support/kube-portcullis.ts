import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, freePortPair } from './ports.js';
import { waitFor } from './wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A `portcullis kubernetes` replica running as its own process (the real command). */
export interface KubePortcullis {
  readonly child: ChildProcess;
  /** Its pod name (POD_NAME): the Lease identity and the status field manager's suffix. */
  readonly identity: string;
  readonly proxyPort: number;
  /** Envoy's admin URL (nothing answers with `withoutEnvoy`). */
  readonly adminUrl: string;
  output(): string;
  alive(): boolean;
  /** Sends `signal` (SIGTERM: graceful) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Runs `src/cmd/main.ts kubernetes --kubeconfig <file>` as replica `identity`, its listeners on
 * free loopback ports given through the environment (ADDRESS, GRPC_ADDRESS, ENVOY_ADMIN_ADDRESS:
 * the environment wins over the settings object, so replicas on one host do not collide), and
 * waits until `ready` (a log line) appears unless it is undefined.
 */
export async function spawnKubePortcullis(options: {
  readonly kubeconfigPath: string;
  readonly identity: string;
  readonly args?: readonly string[];
  readonly withoutEnvoy?: boolean;
  readonly ready?: string | undefined;
}): Promise<KubePortcullis> {
  const [proxyPort, grpcPort, adminPort] = [await freePort(), await freePortPair(), await freePort()];
  const args = ['--import', 'tsx', 'src/cmd/main.ts', 'kubernetes', '--kubeconfig', options.kubeconfigPath];
  args.push('--namespace', 'default', ...(options.args ?? []));
  if (options.withoutEnvoy === true) args.push('--without-envoy');
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      POD_NAME: options.identity,
      ADDRESS: `127.0.0.1:${proxyPort}`,
      GRPC_ADDRESS: `127.0.0.1:${grpcPort}`,
      ENVOY_ADMIN_ADDRESS: `127.0.0.1:${adminPort}`,
    },
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const replica: KubePortcullis = {
    child,
    identity: options.identity,
    proxyPort,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    output: () => output,
    alive,
    async stop(signal = 'SIGTERM') {
      if (!alive()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
  const ready = options.ready;
  if (ready === undefined) return replica;
  try {
    await waitFor(
      async () => {
        if (!alive()) throw new Error(`portcullis kubernetes exited: ${output}`);
        return output.includes(ready);
      },
      { what: `${options.identity} to log "${ready}"`, timeoutMs: 60_000 },
    );
  } catch (err) {
    await replica.stop('SIGKILL');
    throw new Error(`${(err as Error).message}\n${output}`);
  }
  return replica;
}
