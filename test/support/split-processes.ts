/**
 * A split deployment for integration tests: four Portcullis processes started with the real
 * command (`src/cmd/main.ts --config <file>`), one per service (databroker on memory, authorize,
 * authenticate, proxy with its own Envoy), sharing `shared_secret`, `cookie_secret` and
 * `tls_derive`, on loopback ports picked up front (so every config is complete when written),
 * plus the test IdP and an echo upstream. `spawnService` is the generic part: spawn, keep the
 * output, resolve once a ready line is logged, bounded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort, freePortPair } from './ports.js';
import { startTestIdp, type TestIdp } from './test-idp.js';
import { startEchoUpstream, type EchoUpstream } from './upstreams.js';
import { waitFor } from './wait.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** One Portcullis process of the real command. */
export interface ServiceProcess {
  readonly name: string;
  readonly configPath: string;
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** True while it has neither exited nor been killed. */
  alive(): boolean;
  /** Sends `signal` (default SIGTERM) and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns `node --import tsx src/cmd/main.ts --config <configPath>` (or `main.ts <args>` with
 * `args`, `configPath` then only naming it) and resolves once its output
 * contains `ready` (default: the `ready: ` line every mode logs) within `timeoutMs` (default 30 s);
 * a process that exits first, or never gets there, is stopped and the error carries its output.
 */
export async function spawnService(
  name: string,
  configPath: string,
  options: {
    ready?: string;
    timeoutMs?: number;
    env?: Readonly<Record<string, string>>;
    args?: readonly string[];
  } = {},
): Promise<ServiceProcess> {
  const args = options.args ?? ['--config', configPath];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cmd/main.ts', ...args], {
    cwd: REPO,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const running: ServiceProcess = {
    name,
    configPath,
    child,
    output: () => output,
    alive,
    async stop(signal = 'SIGTERM') {
      if (!alive()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
  const ready = options.ready ?? 'ready: ';
  try {
    await waitFor(
      async () => {
        if (!alive()) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}): ${output}`);
        return output.includes(ready);
      },
      { what: `${name} to log "${ready}"`, timeoutMs: options.timeoutMs ?? 30_000 },
    );
  } catch (err) {
    await running.stop();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- ${name} output ---\n${output}`);
  }
  return running;
}

/** The IdP client the split deployment registers. */
const CLIENT = { clientId: 'portcullis-split-test', clientSecret: 'split-test-secret' };

/** The `tls_derive` name every process uses. */
export const SPLIT_TLS_NAME = 'portcullis.internal';

/** A running split deployment; see `startSplitDeployment`. */
export interface SplitDeployment {
  readonly idp: TestIdp;
  readonly upstream: EchoUpstream;
  /** The decoded `shared_secret` every process holds. */
  readonly sharedSecret: Uint8Array;
  /** Envoy's plain-HTTP listener on 127.0.0.1 (the proxy process's `address`). */
  readonly proxyPort: number;
  /** gRPC ports on 127.0.0.1 (derived TLS). */
  readonly databrokerPort: number;
  readonly authorizePort: number;
  /** The authenticate process's HTTPS endpoints (its grpc_address port + 1). */
  readonly authenticateHttpPort: number;
  /** The proxy's Envoy admin, `http://127.0.0.1:<port>`. */
  readonly envoyAdminUrl: string;
  /** `http://app.localhost:<proxyPort>`: needs a signed-in user of example.com. */
  readonly appOrigin: string;
  /** `http://public.localhost:<proxyPort>`: public. */
  readonly publicOrigin: string;
  /** `http://authenticate.localhost:<proxyPort>`: the authenticate service URL. */
  readonly authenticateOrigin: string;
  readonly processes: {
    readonly databroker: ServiceProcess;
    readonly authorize: ServiceProcess;
    readonly authenticate: ServiceProcess;
    readonly proxy: ServiceProcess;
  };
  /** Starts the databroker again with its config (after a test stopped it); resolves once ready. */
  restartDatabroker(): Promise<ServiceProcess>;
  /** Every process's output, labelled, for failure messages. */
  outputs(): string;
  stop(): Promise<void>;
}

/**
 * Starts the IdP, an echo upstream and the four services (databroker first, then the others
 * together), each with its own config file: routes `app` (example.com users) and `public`;
 * authorize, authenticate and the proxy (whose fast-path revocations follow the session change
 * feed) reach the databroker at `databroker_service_url`, the proxy's Envoy reaches authorize and
 * authenticate at their service URLs, all over the derived TLS.
 * `databroker_outage_grace` is 0 s, so a databroker outage shows at once.
 */
export async function startSplitDeployment(): Promise<SplitDeployment> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  const started: ServiceProcess[] = [];
  const outputs = (): string => started.map((p) => `--- ${p.name} ---\n${p.output()}`).join('\n');
  try {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-split-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const idp = await startTestIdp();
    cleanups.push(() => idp.close());
    const upstream = await startEchoUpstream({ id: 'app' });
    cleanups.push(() => upstream.stop());
    const [proxyPort, proxyGrpc, adminPort, databrokerPort, authorizePort, authenticateGrpc] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
      await freePortPair(),
    ];
    const sharedSecret = randomBytes(32);
    const authenticateOrigin = `http://authenticate.localhost:${proxyPort}`;
    idp.addClient({ ...CLIENT, redirectUris: [`${authenticateOrigin}/oauth2/callback`] });
    const common = {
      shared_secret: sharedSecret.toString('base64'),
      cookie_secret: randomBytes(32).toString('base64'),
      tls_derive: SPLIT_TLS_NAME,
      insecure_server: true,
      log_level: 'info',
      authenticate_service_url: authenticateOrigin,
      idp_provider: 'oidc',
      idp_provider_url: idp.issuer,
      idp_client_id: CLIENT.clientId,
      idp_client_secret: CLIENT.clientSecret,
      routes: [
        {
          from: 'http://app.localhost',
          to: upstream.url,
          allowed_domains: ['example.com'],
          pass_identity_headers: true,
        },
        { from: 'http://public.localhost', to: upstream.url, allow_public_unauthenticated_access: true },
      ],
    };
    const databrokerUrl = `https://127.0.0.1:${databrokerPort}`;
    const write = (name: string, config: Record<string, unknown>): string => {
      const path = join(dir, `${name}.yaml`);
      writeFileSync(path, stringify({ ...common, ...config }));
      return path;
    };
    const track = (service: ServiceProcess): ServiceProcess => {
      started.push(service);
      cleanups.push(() => service.stop());
      return service;
    };
    const launch = async (name: string, config: Record<string, unknown>): Promise<ServiceProcess> =>
      track(await spawnService(name, write(name, config)));
    const databroker = await launch('databroker', {
      services: 'databroker',
      grpc_address: `127.0.0.1:${databrokerPort}`,
    });
    // Settled, not Promise.all: each launch that succeeds is tracked before a failure is thrown.
    const launched = await Promise.allSettled([
      launch('authorize', {
        services: 'authorize',
        grpc_address: `127.0.0.1:${authorizePort}`,
        databroker_service_url: databrokerUrl,
        databroker_outage_grace: '0s',
      }),
      launch('authenticate', {
        services: 'authenticate',
        grpc_address: `127.0.0.1:${authenticateGrpc}`,
        databroker_service_url: databrokerUrl,
        databroker_outage_grace: '0s',
      }),
      launch('proxy', {
        services: 'proxy',
        address: `127.0.0.1:${proxyPort}`,
        grpc_address: `127.0.0.1:${proxyGrpc}`,
        envoy_admin_address: `127.0.0.1:${adminPort}`,
        authorize_service_url: `https://127.0.0.1:${authorizePort}`,
        databroker_service_url: databrokerUrl,
        authenticate_internal_service_url: `https://127.0.0.1:${authenticateGrpc + 1}`,
      }),
    ]);
    const failure = launched.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
    const [authorize, authenticate, proxy] = launched.map((result) =>
      result.status === 'fulfilled' ? result.value : undefined,
    ) as [ServiceProcess, ServiceProcess, ServiceProcess];
    return {
      idp,
      upstream,
      sharedSecret,
      proxyPort,
      databrokerPort,
      authorizePort,
      authenticateHttpPort: authenticateGrpc + 1,
      envoyAdminUrl: `http://127.0.0.1:${adminPort}`,
      appOrigin: `http://app.localhost:${proxyPort}`,
      publicOrigin: `http://public.localhost:${proxyPort}`,
      authenticateOrigin,
      processes: { databroker, authorize, authenticate, proxy },
      outputs,
      restartDatabroker: async () =>
        track(await spawnService('databroker (restarted)', databroker.configPath)),
      async stop() {
        // Graceful first (SIGTERM), so each process also stops what it supervises (Envoy).
        await Promise.all(started.map((p) => p.stop('SIGTERM')));
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
