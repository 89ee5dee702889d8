import type { IR } from '../ir/types.js';
import { adminRequest } from '../envoy/admin.js';
import { errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { Running } from './start.js';

/** One listener Envoy is serving, as the terminal shows it. */
export interface EnvoyListenerLine {
  readonly name: string;
  readonly url: string;
  /** What the listener does: `routes` (the user-facing listener) or `redirects to HTTPS`. */
  readonly serves: string;
}

/**
 * Reads Envoy's admin `/listeners?format=json` answer (`listener_statuses` with each listener's
 * bound `local_address`, so port 0 shows the port Envoy got) into one line per listener, with an
 * `https://` URL for the user-facing listener when the IR gives it TLS and `http://` otherwise.
 * Listeners without a socket address are left out. Pure; throws on text that is not JSON.
 */
export function envoyListenerLines(
  listenersJson: string,
  ir: Pick<IR, 'listener'> | undefined,
): EnvoyListenerLine[] {
  const parsed = JSON.parse(listenersJson) as {
    listener_statuses?: {
      name?: string;
      local_address?: { socket_address?: { address?: string; port_value?: number } };
    }[];
  };
  const lines: EnvoyListenerLine[] = [];
  for (const status of parsed.listener_statuses ?? []) {
    const socket = status.local_address?.socket_address;
    if (socket?.address === undefined || socket.port_value === undefined) continue;
    const name = status.name ?? '';
    const main = ir !== undefined && name === ir.listener.name;
    const scheme = main && ir.listener.tls !== undefined ? 'https' : 'http';
    const host = socket.address.includes(':') ? `[${socket.address}]` : socket.address;
    lines.push({
      name,
      url: `${scheme}://${host}:${socket.port_value}`,
      serves: main ? 'routes' : 'redirects to HTTPS',
    });
  }
  return lines;
}

/**
 * Says on the terminal when requests can flow. With a supervised Envoy: once Envoy is LIVE (it has
 * the config and its listeners are bound), one `listening` line per Envoy listener with its URL,
 * read back from Envoy's admin, then one `ready` line. In sidecar mode, once ADS is serving; in a
 * split process without the proxy, once its services are. A slow Envoy is reported, not fatal: the
 * supervisor keeps it running and restarting.
 */
export async function announceReady(running: Running, log: Logger): Promise<void> {
  if (!running.parts.proxy) {
    log.info({ grpc_port: running.grpcPort }, `ready: ${running.service} is serving`);
    return;
  }
  const supervisor = running.supervisor;
  if (supervisor === undefined) {
    log.info({ grpc_port: running.grpcPort }, 'ready: serving ADS for a sidecar Envoy');
    return;
  }
  try {
    await supervisor.waitReady(60_000);
  } catch (err) {
    log.warn({ error: errorMessage(err) }, 'Envoy is not ready yet; it keeps starting');
    return;
  }
  const adminUrl = supervisor.adminUrl;
  try {
    if (adminUrl === undefined) throw new Error('admin address not known');
    const answer = await adminRequest(adminUrl, '/listeners?format=json');
    const ir = running.reloader.lastGoodBuild()?.ir;
    for (const line of envoyListenerLines(answer.body, ir))
      log.info({ listener: line.name, serves: line.serves }, `Envoy listening on ${line.url}`);
  } catch (err) {
    log.warn({ error: errorMessage(err) }, "Envoy's listeners could not be read from its admin");
  }
  log.info({ admin: adminUrl }, 'ready: Envoy is serving routes (it has the config)');
}
