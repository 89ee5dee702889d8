/**
 * A test host in a network namespace the test makes itself (`ip netns` and a veth pair), for
 * upstreams that need an address that is neither loopback nor link-local: the API server refuses
 * those in EndpointSlices. Traffic stays on this machine: the namespace's end of the veth is the
 * only thing the /30 reaches. Needs root and iproute2 (`.ci/run` installs it); without them the
 * start fails, naming what is missing.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

const ECHO_SCRIPT = fileURLToPath(new URL('./netns-echo.mjs', import.meta.url));

/** An echo upstream inside a test host; see NetnsHost.startEcho. */
export interface NetnsEcho {
  readonly id: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** A running test host; stop() removes the namespace, the veth pair and every echo in it. */
export interface NetnsHost {
  /** The host's address (198.18.0.0/15, the range set aside for test networks). */
  readonly address: string;
  /** Starts an echo upstream (JSON answers naming `id`) listening on `address`, on a free port. */
  startEcho(id: string): Promise<NetnsEcho>;
  stop(): Promise<void>;
}

let hosts = 0;

function run(args: readonly string[]): void {
  const result = spawnSync('ip', args, { encoding: 'utf8' });
  if (result.error !== undefined || result.status !== 0)
    throw new Error(
      `ip ${args.join(' ')} failed (a test host needs root and iproute2): ${result.error?.message ?? result.stderr.trim()}`,
    );
}

/** Makes a namespace with one veth pair: this side 198.18.<a>.<b>+1, the host's side +2. */
export async function startNetnsHost(): Promise<NetnsHost> {
  hosts += 1;
  const tag = `${process.pid % 100_000}x${hosts}`;
  const namespace = `pc-${tag}`;
  const outside = `pc${tag}a`;
  const inside = `pc${tag}b`;
  const octet = process.pid % 250;
  const base = (hosts % 64) * 4;
  const address = `198.18.${octet}.${base + 2}`;
  run(['netns', 'add', namespace]);
  const echoes = new Set<ChildProcess>();
  const stop = async (): Promise<void> => {
    for (const child of echoes) child.kill('SIGKILL');
    spawnSync('ip', ['netns', 'del', namespace]);
    spawnSync('ip', ['link', 'del', outside]);
  };
  try {
    run(['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside]);
    run(['link', 'set', inside, 'netns', namespace]);
    run(['addr', 'add', `198.18.${octet}.${base + 1}/30`, 'dev', outside]);
    run(['link', 'set', outside, 'up']);
    run(['netns', 'exec', namespace, 'ip', 'addr', 'add', `${address}/30`, 'dev', inside]);
    run(['netns', 'exec', namespace, 'ip', 'link', 'set', inside, 'up']);
    run(['netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up']);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    address,
    async startEcho(id) {
      const child = spawn('ip', ['netns', 'exec', namespace, process.execPath, ECHO_SCRIPT, id, address], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      echoes.add(child);
      let port: number | undefined;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const match = /^port (\d+)$/.exec(line);
        if (match) port = Number(match[1]);
      });
      await waitFor(async () => port, { what: `echo ${id} listening in ${namespace}` });
      return {
        id,
        port: port as number,
        async stop() {
          if (child.exitCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
          }
          echoes.delete(child);
        },
      };
    },
    stop,
  };
}
