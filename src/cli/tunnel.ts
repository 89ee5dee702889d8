/**
 * One tunnel through Portcullis: a CONNECT with the cached token (signing in first when there is
 * none, and once more when Portcullis answers 401 or a redirect), then bytes both ways with
 * half-close (one side's end ends the other side's writing; the tunnel is done when both are).
 */
import { pipeline } from 'node:stream/promises';
import type { Duplex, Readable, Writable } from 'node:stream';
import { PortcullisError } from '../shared/errors.js';
import type { PortcullisEndpoint } from './endpoint.js';
import type { TunnelSessions } from './h2-tunnel.js';
import { sendConnect } from './portcullis-http.js';
import type { TokenCache } from './token-cache.js';

/**
 * The token for one Portcullis origin: the cached one, or a fresh sign-in. Connections that need a
 * sign-in at the same time share one (one browser tab, not one per connection). One per run.
 */
export class TokenSource {
  /** The sign-in under way, shared by every connection that needs it. */
  private pending: Promise<string> | undefined;
  /** The token this run last signed in for (a cache read racing a sign-in may miss it). */
  private latest: string | undefined;

  constructor(
    private readonly cache: TokenCache,
    private readonly key: string,
    private readonly signIn: () => Promise<string>,
  ) {}

  /** The token to try: this run's latest, else the cached one, else one from a sign-in (then cached). */
  async current(): Promise<string> {
    if (this.pending !== undefined) return this.pending;
    const cached = this.latest ?? (await this.cache.get(this.key));
    return cached ?? this.latest ?? this.fresh();
  }

  /**
   * A token to use instead of `refused` (which Portcullis turned away): a newer one when another
   * connection (or process) already signed in again, else `refused` is forgotten and a sign-in runs.
   */
  async replace(refused: string): Promise<string> {
    const newer = (token: string | undefined): token is string => token !== undefined && token !== refused;
    if (this.pending !== undefined) return this.pending;
    if (newer(this.latest)) return this.latest;
    const cached = await this.cache.get(this.key);
    if (newer(cached)) return cached;
    if (newer(this.latest)) return this.latest;
    if (cached !== undefined) await this.cache.delete(this.key);
    return this.fresh();
  }

  private fresh(): Promise<string> {
    this.pending ??= this.signIn()
      .then(async (token) => {
        this.latest = token;
        await this.cache.put(this.key, token);
        return token;
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}

/**
 * Opens the tunnel to `authority` (`host:port`, the CONNECT target) on `sessions` (the endpoint's
 * shared HTTP/2 connection) and resolves with its duplex (an HTTP/2 stream, or a socket over HTTP/1.1).
 * Rejects with a one-line PortcullisError: denied (403, with the reason), unreachable (502/503),
 * still unauthenticated after a fresh sign-in, or a connection/TLS failure.
 */
export async function openTunnel(
  endpoint: PortcullisEndpoint,
  sessions: TunnelSessions,
  authority: string,
  tokens: TokenSource,
): Promise<Duplex> {
  const token = await tokens.current();
  let answer = await sendConnect(endpoint, sessions, authority, token);
  if (answer.kind === 'sign-in')
    answer = await sendConnect(endpoint, sessions, authority, await tokens.replace(token));
  if (answer.kind === 'open') return answer.socket;
  if (answer.kind === 'sign-in')
    throw new PortcullisError(
      'CLIENT_UNAUTHENTICATED',
      `Portcullis still asks to sign in for ${authority} right after a sign-in: is ${endpoint.origin.host} the right host for this route?`,
    );
  throw new PortcullisError('CLIENT_REFUSED', answer.message);
}

/**
 * Copies `input` to `remote` and `remote` to `output` until both directions have ended (each end
 * is passed on as a half-close). With `untilRemoteEnds`, settles as soon as the remote has ended
 * (stdin may never end under an SSH ProxyCommand). Rejects with the first error. The remote socket
 * is destroyed when this settles; `input` and `output` are the caller's to close.
 */
export async function splice(
  input: Readable,
  output: Writable,
  remote: Duplex,
  untilRemoteEnds = false,
): Promise<void> {
  const outbound = pipeline(input, remote);
  const inbound = pipeline(remote, output);
  outbound.catch(() => undefined);
  inbound.catch(() => undefined);
  try {
    await (untilRemoteEnds
      ? Promise.race([inbound, outbound.then(() => inbound)])
      : Promise.all([outbound, inbound]));
  } finally {
    remote.destroy();
  }
}
