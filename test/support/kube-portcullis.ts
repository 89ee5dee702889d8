import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, freePortPair } from './ports.js';
import { spawnService, type ServiceProcess } from './split-processes.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A `portcullis kubernetes` replica running as its own process (the real command). */
export interface KubePortcullis extends ServiceProcess {
  /** Its pod name (POD_NAME): the Lease identity and the status field manager's suffix. */
  readonly identity: string;
  readonly proxyPort: number;
  /** Envoy's admin URL (nothing answers with `--without-envoy`). */
  readonly adminUrl: string;
}

/** The command line of `portcullis kubernetes` against `kubeconfigPath` in namespace default. */
function kubernetesArgs(kubeconfigPath: string, extra: readonly string[]): string[] {
  return ['kubernetes', '--kubeconfig', kubeconfigPath, '--namespace', 'default', ...extra];
}

/**
 * Runs `src/cmd/main.ts kubernetes --kubeconfig <file>` as replica `identity` (spawnService), its
 * listeners on free loopback ports given through the environment (ADDRESS, GRPC_ADDRESS,
 * ENVOY_ADMIN_ADDRESS: the environment wins over the settings object, so replicas on one host do
 * not collide), and resolves once it logs `ready`.
 */
export async function spawnKubePortcullis(options: {
  readonly kubeconfigPath: string;
  readonly identity: string;
  readonly args?: readonly string[];
  readonly ready: string;
  /** Envoy's listener port, when the settings must name it (an authenticate URL); default: a free one. */
  readonly proxyPort?: number;
  /** More environment (METRICS_ADDRESS, ...). */
  readonly env?: Readonly<Record<string, string>>;
}): Promise<KubePortcullis> {
  const proxyPort = options.proxyPort ?? (await freePort());
  const [grpcPort, adminPort] = [await freePortPair(), await freePort()];
  const replica = await spawnService(options.identity, '', {
    args: kubernetesArgs(options.kubeconfigPath, options.args ?? []),
    ready: options.ready,
    timeoutMs: 60_000,
    env: {
      POD_NAME: options.identity,
      ADDRESS: `127.0.0.1:${proxyPort}`,
      GRPC_ADDRESS: `127.0.0.1:${grpcPort}`,
      ENVOY_ADMIN_ADDRESS: `127.0.0.1:${adminPort}`,
      ...options.env,
    },
  });
  return { ...replica, identity: options.identity, proxyPort, adminUrl: `http://127.0.0.1:${adminPort}` };
}

/** Runs `portcullis kubernetes` expecting it to exit by itself (within 60 s): its status and output. */
export function runKubePortcullisToExit(kubeconfigPath: string): { status: number | null; output: string } {
  const ran = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cmd/main.ts', ...kubernetesArgs(kubeconfigPath, [])],
    { cwd: REPO, encoding: 'utf8', timeout: 60_000, env: { ...process.env, POD_NAME: 'early' } },
  );
  return { status: ran.status, output: `${ran.stdout}${ran.stderr}` };
}
