import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { setprivPath } from '../../src/envoy/process.js';
import { kubeClient, type KubeClient } from './kube-client.js';
import { freePort } from './ports.js';
import { waitFor } from './wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Where `npm run setup:kubernetes` (scripts/build-kubernetes.mjs) puts etcd and kube-apiserver. */
export const KUBE_BIN_DIR = join(REPO, '.tools', 'kubernetes', 'bin');

/** The audience of the service-account tokens the test API server issues and accepts. */
export const KUBE_API_AUDIENCE = 'https://kubernetes.default.svc';

/** A real etcd plus kube-apiserver on loopback, started by a test; see startKubeCluster. */
export interface KubeCluster {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** The CA that signed the API server's self-signed serving certificate (PEM). */
  readonly caPem: string;
  /** A token of user `portcullis-admin` in group `system:masters` (everything allowed). */
  readonly adminToken: string;
  /** A kubeconfig (server, CA, admin token) for clients that read one, e.g. `@kubernetes/client-node`. */
  readonly kubeconfigPath: string;
  /** Milliseconds from spawning etcd to the API server's /readyz answering ok. */
  readonly startupMs: number;
  /** Process ids of etcd and kube-apiserver (to check that stop() leaves none behind). */
  readonly pids: readonly number[];
  /** A client acting as the admin. */
  readonly admin: KubeClient;
  /** A client sending `token` (e.g. a service account's); closed by stop(). */
  clientFor(token: string): KubeClient;
  /** The last output of etcd and kube-apiserver, for a failing test's message. */
  output(): string;
  /** Stops kube-apiserver then etcd (SIGTERM, SIGKILL after 10 s), waits for both, removes the temp dir. Idempotent. */
  stop(): Promise<void>;
}

/** A spawned server whose output is kept (the last 64 KiB) for error messages. */
interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  output(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

const OUTPUT_LIMIT = 64 * 1024;

/**
 * The path of `binary` (`etcd` or `kube-apiserver`): `ETCD_BIN` / `KUBE_APISERVER_BIN` when set,
 * else the one `npm run setup:kubernetes` built. Missing, it throws saying how to build it: the
 * kubernetes tests fail loudly, never skip.
 */
export function kubeBinary(binary: 'etcd' | 'kube-apiserver'): string {
  const variable = binary === 'etcd' ? 'ETCD_BIN' : 'KUBE_APISERVER_BIN';
  const path = process.env[variable] ?? join(KUBE_BIN_DIR, binary);
  if (!existsSync(path)) {
    throw new Error(
      `${binary} not found at ${path}. Build it with \`npm run setup:kubernetes\` (needs Go 1.26+; ` +
        `about 10 minutes the first time, cached after), or set ${variable}. ` +
        'The other tests run without it: `npm test -- --without kubernetes`.',
    );
  }
  return path;
}

/** Spawns `binary`, with a parent-death signal (setpriv) so a killed test run leaves no server behind. */
function spawnServer(name: string, binary: string, args: readonly string[]): Server {
  const setpriv = setprivPath();
  const child =
    setpriv === undefined
      ? spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(setpriv, ['--pdeathsig', 'SIGKILL', '--', binary, ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    name,
    child,
    output: () => output,
    alive,
    async stop() {
      if (alive()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

/** Waits (bounded) until `probe` holds, failing at once with the server's output when it exits. */
async function waitForServer(
  server: Server,
  what: string,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  // waitFor counts a throwing probe as "not yet", so an exit ends the wait as a distinct result.
  const result = await waitFor(async () => (server.alive() ? (await probe()) && 'ready' : 'exited'), {
    what,
    timeoutMs,
    intervalMs: 100,
  }).catch((err: unknown) => {
    throw new Error(
      `${err instanceof Error ? err.message : String(err)}\n${server.name} output:\n${server.output().slice(-4000)}`,
    );
  });
  if (result === 'exited') {
    const how = String(server.child.exitCode ?? server.child.signalCode);
    throw new Error(
      `${server.name} exited (${how}) before ${what}\n${server.name} output:\n${server.output().slice(-4000)}`,
    );
  }
}

/** Starts etcd with its data in `dir`, added to `servers` at once so a failed start is still stopped. */
async function startEtcd(dir: string, servers: Server[]): Promise<string> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const etcd = spawnServer('etcd', kubeBinary('etcd'), [
    '--name=portcullis-test',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=portcullis-test=${peer}`,
    '--log-level=warn',
    // A throwaway store: losing it on a crash costs nothing, and fsync on a busy disk costs seconds.
    '--unsafe-no-fsync',
  ]);
  servers.push(etcd);
  await waitForServer(etcd, `etcd on ${client} to be healthy`, 30_000, async () => {
    const answer = await fetch(`${client}/health`).catch(() => undefined);
    return answer?.ok === true && ((await answer.json()) as { health?: string }).health === 'true';
  });
  return client;
}

/**
 * Starts a real etcd and a real kube-apiserver on loopback (free ports, a temp dir for etcd's data,
 * the serving certificate, the token file and keys) and waits (bounded) until /readyz answers ok.
 * Made at test time: an admin token (group `system:masters`), the EC P-256 key pair that signs and
 * verifies service-account tokens (audience KUBE_API_AUDIENCE). Authorization is RBAC only; no
 * controller manager runs, so nothing reconciles (namespaces are not finalized, no default service
 * account is made, objects' status is only what the API server itself writes). If starting fails,
 * whatever started is stopped before the error (which carries the servers' output) is thrown.
 * Call `stop()` in an `after` hook.
 */
export async function startKubeCluster(): Promise<KubeCluster> {
  const startedAt = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-kube-'));
  const servers: Server[] = [];
  const clients: KubeClient[] = [];
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    for (const client of clients) client.close();
    // The API server first: without etcd it would keep retrying its storage while shutting down.
    for (const server of [...servers].reverse()) await server.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const output = (): string => servers.map((server) => `--- ${server.name}\n${server.output()}`).join('\n');
  try {
    const etcdUrl = await startEtcd(dir, servers);
    const adminToken = randomBytes(32).toString('base64url');
    const tokenFile = join(dir, 'tokens.csv');
    writeFileSync(tokenFile, `${adminToken},portcullis-admin,portcullis-admin,"system:masters"\n`, {
      mode: 0o600,
    });
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const signingKey = join(dir, 'sa.key');
    const verifyingKey = join(dir, 'sa.pub');
    writeFileSync(signingKey, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(verifyingKey, keys.publicKey.export({ type: 'spki', format: 'pem' }));
    const certDir = join(dir, 'certs');
    const port = await freePort();
    const url = `https://127.0.0.1:${port}`;
    const apiserver = spawnServer('kube-apiserver', kubeBinary('kube-apiserver'), [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${port}`,
      // Loopback is not a usable address for the `kubernetes` Service's endpoints, so none are kept.
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      // No cert/key given: it writes a self-signed CA and a serving certificate for 127.0.0.1 here.
      `--cert-dir=${certDir}`,
      `--token-auth-file=${tokenFile}`,
      '--authorization-mode=RBAC',
      `--service-account-issuer=${KUBE_API_AUDIENCE}`,
      `--service-account-key-file=${verifyingKey}`,
      `--service-account-signing-key-file=${signingKey}`,
      `--api-audiences=${KUBE_API_AUDIENCE}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--profiling=false',
    ]);
    servers.push(apiserver);
    const certFile = join(certDir, 'apiserver.crt');
    let caPem = '';
    await waitForServer(apiserver, `kube-apiserver on ${url} to answer /readyz ok`, 90_000, async () => {
      // Read on every probe until one succeeds: a read while the server writes it may be partial.
      if (!existsSync(certFile)) return false;
      caPem = readFileSync(certFile, 'utf8');
      const probe = kubeClient(url, caPem, adminToken);
      try {
        return (await probe.request('GET', '/readyz')).status === 200;
      } finally {
        probe.close();
      }
    });
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfig(url, caPem, adminToken), { mode: 0o600 });
    const clientFor = (token: string): KubeClient => {
      const client = kubeClient(url, caPem, token);
      clients.push(client);
      return client;
    };
    return {
      url,
      caPem,
      adminToken,
      kubeconfigPath,
      startupMs: Math.round(performance.now() - startedAt),
      pids: servers.map((server) => server.child.pid ?? -1),
      admin: clientFor(adminToken),
      clientFor,
      output,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** A kubeconfig naming the test API server, its CA and the admin token. */
function kubeconfig(url: string, caPem: string, token: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'test',
        cluster: { server: url, 'certificate-authority-data': Buffer.from(caPem).toString('base64') },
      },
    ],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin', namespace: 'default' } }],
    'current-context': 'test',
  });
}
