/**
 * Where the client reaches Portcullis, and the TLS connection to it (directly or through an
 * HTTPS_PROXY). One rule for `login` and `tcp`:
 * - without `--via`, the client dials the route origin's host on its port (443 by default);
 * - with `--via https://name:port`, it dials the via address, and the via URL is Portcullis's
 *   origin for TLS and sign-in (the server name checked in the certificate, the Host of the login
 *   request, the token cache key), as pomerium-cli's `--pomerium-url` does;
 * - with `--via https://<IP>:port` it dials that address but keeps the route's own name for TLS and
 *   sign-in (SNI cannot carry an IP address, and the route host's name is what the certificate covers).
 * The CONNECT itself always names the route's authority (`db.example.com:5432`).
 */
import { isIP } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkServerIdentity, connect as tlsConnect } from 'node:tls';
import type { Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import { getProxyForUrl } from 'proxy-from-env';
import { PortcullisError } from '../shared/errors.js';

/** How the client checks Portcullis's certificate. */
export interface TlsTrust {
  /** PEM of the CA(s) to trust instead of the system's (`--ca-cert`). */
  readonly ca?: string;
  /** `--insecure-skip-verify`: no certificate check at all (tests only). */
  readonly insecureSkipVerify: boolean;
}

/** One resolved way to reach Portcullis for a route. */
export interface PortcullisEndpoint {
  /** `https://name[:port]`: the login request's origin and Host, and the token cache key. */
  readonly origin: URL;
  /** The TCP address dialled (directly, or named in the proxy's CONNECT). */
  readonly dialHost: string;
  readonly dialPort: number;
  /** The TLS server name: sent as SNI and checked against the certificate. */
  readonly serverName: string;
  readonly trust: TlsTrust;
}

/** How long dialling, the proxy's CONNECT and the TLS handshake may take together. */
const DIAL_TIMEOUT_MS = 30_000;

/**
 * Parses an `https://host[:port]` URL given on the command line (the route origin or `--via`);
 * anything with a path, query or credentials, or another scheme, is refused with a message naming
 * the flag.
 */
export function parseOrigin(value: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new PortcullisError('CLIENT_USAGE', `${flag} must be an https:// URL, got "${value}"`);
  }
  if (url.protocol !== 'https:' || url.hostname === '' || url.username !== '' || url.password !== '')
    throw new PortcullisError('CLIENT_USAGE', `${flag} must be an https://host[:port] URL, got "${value}"`);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '')
    throw new PortcullisError('CLIENT_USAGE', `${flag} takes only https://host[:port], without a path`);
  return new URL(url.origin);
}

/** The endpoint for `route` (an https origin) reached directly or through `via` (see the file comment). */
export function resolveEndpoint(route: URL, via: URL | undefined, trust: TlsTrust): PortcullisEndpoint {
  const dial = via ?? route;
  const viaIsAddress = via !== undefined && isIP(bareHost(via.hostname)) !== 0;
  const origin = via === undefined || viaIsAddress ? new URL(route.origin) : new URL(via.origin);
  return {
    origin,
    dialHost: bareHost(dial.hostname),
    dialPort: dial.port === '' ? 443 : Number(dial.port),
    serverName: bareHost(origin.hostname),
    trust,
  };
}

/**
 * Opens a TLS connection to Portcullis: through the proxy HTTPS_PROXY / ALL_PROXY names for the
 * dial address unless NO_PROXY excludes it (proxy-from-env reads them from process.env), else
 * directly. Resolves once the handshake is done, offering `alpn` (the caller reads the server's
 * choice from `alpnProtocol`); failures are one-line PortcullisErrors (`describeDialError`).
 */
export async function openTls(
  endpoint: PortcullisEndpoint,
  alpn: readonly string[] = ['http/1.1'],
): Promise<TLSSocket> {
  const target = `https://${hostPort(endpoint.dialHost, endpoint.dialPort)}`;
  const proxy = getProxyForUrl(target);
  const tunnel = proxy === '' ? undefined : await proxyConnect(parseProxy(proxy), endpoint);
  const sni = isIP(endpoint.serverName) === 0 ? { servername: endpoint.serverName } : {};
  // allowHalfOpen: a tunnel half-closes (tls.connect passes it to the TLSSocket; @types omits it).
  const options: ConnectionOptions & { allowHalfOpen: boolean } = {
    ...(tunnel === undefined ? { host: endpoint.dialHost, port: endpoint.dialPort } : { socket: tunnel }),
    ...sni,
    ...(endpoint.trust.ca === undefined ? {} : { ca: endpoint.trust.ca }),
    rejectUnauthorized: !endpoint.trust.insecureSkipVerify,
    // The name to check is the server name, also when the dialled address is an IP or a proxy.
    checkServerIdentity: (_host, cert) => checkServerIdentity(endpoint.serverName, cert),
    ALPNProtocols: [...alpn],
    allowHalfOpen: true,
    timeout: DIAL_TIMEOUT_MS,
  };
  const socket = tlsConnect(options);
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => {
      socket.destroy();
      reject(describeDialError(err, endpoint, proxy));
    };
    const onTimeout = (): void => fail(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
    socket.once('timeout', onTimeout);
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      socket.setTimeout(0);
      socket.removeListener('timeout', onTimeout);
      socket.removeListener('error', fail);
      resolve(socket);
    });
  });
}

/**
 * A CONNECT to the proxy for the endpoint's dial address (Node's http client parses the answer);
 * an https:// proxy is reached over TLS. `user:password@` in the proxy URL becomes
 * Proxy-Authorization (Basic). Resolves with the raw tunnel socket.
 */
async function proxyConnect(proxy: URL, endpoint: PortcullisEndpoint): Promise<Socket> {
  const authority = hostPort(endpoint.dialHost, endpoint.dialPort);
  const credentials =
    proxy.username === ''
      ? {}
      : {
          'proxy-authorization': `Basic ${Buffer.from(
            `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`,
          ).toString('base64')}`,
        };
  const send = proxy.protocol === 'https:' ? httpsRequest : httpRequest;
  const req = send({
    host: bareHost(proxy.hostname),
    port: proxy.port === '' ? (proxy.protocol === 'https:' ? 443 : 80) : Number(proxy.port),
    method: 'CONNECT',
    path: authority,
    headers: { host: authority, ...credentials },
    agent: false,
    timeout: DIAL_TIMEOUT_MS,
  });
  return new Promise((resolve, reject) => {
    req.once('connect', (res, socket, head) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(
          new PortcullisError(
            'CLIENT_PROXY',
            `the proxy ${proxy.host} refused to connect to ${authority}: ${res.statusCode ?? 0} ${res.statusMessage ?? ''}`.trim(),
          ),
        );
        return;
      }
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.once('error', (err) =>
      reject(new PortcullisError('CLIENT_PROXY', `cannot reach the proxy ${proxy.host}: ${reasonOf(err)}`)),
    );
    req.end();
  });
}

function parseProxy(value: string): URL {
  try {
    return new URL(value);
  } catch {
    throw new PortcullisError('CLIENT_PROXY', `HTTPS_PROXY (or ALL_PROXY) is not a URL: "${value}"`);
  }
}

/** TLS verification failures: what OpenSSL and Node call them, and what to do about each. */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_UNTRUSTED',
]);

/**
 * One line for a failed dial: an untrusted certificate says to pass --ca-cert, a certificate for
 * another name says which name was checked, an expired one says so; connection failures name the
 * address (and the proxy, when one was used). PortcullisErrors pass through.
 */
export function describeDialError(err: Error, endpoint: PortcullisEndpoint, proxy = ''): PortcullisError {
  if (err instanceof PortcullisError) return err;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const where = hostPort(endpoint.dialHost, endpoint.dialPort);
  if (UNTRUSTED.has(code))
    return new PortcullisError(
      'CLIENT_TLS',
      `Portcullis's certificate at ${where} is not trusted (${code}): pass --ca-cert <file> with the CA that signed it (or --insecure-skip-verify, for testing only)`,
    );
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return new PortcullisError(
      'CLIENT_TLS',
      `Portcullis's certificate at ${where} does not name ${endpoint.serverName}: check the route host or --via (or pass --insecure-skip-verify, for testing only)`,
    );
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID')
    return new PortcullisError(
      'CLIENT_TLS',
      `Portcullis's certificate at ${where} is not valid now (${code})`,
    );
  const through = proxy === '' ? '' : ` through the proxy ${new URL(proxy).host}`;
  return new PortcullisError(
    'CLIENT_CONNECT',
    `cannot reach Portcullis at ${where}${through}: ${reasonOf(err)}`,
  );
}

/** `host:port`, with brackets around an IPv6 address. */
export function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

function bareHost(hostname: string): string {
  return hostname.replace(/^\[(.*)\]$/, '$1');
}

function reasonOf(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && !err.message.includes(code) ? `${code} ${err.message}` : err.message;
}
