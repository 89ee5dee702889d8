/**
 * One HTTP/1.1 exchange with an Envoy listener on a loopback address, with any Host header: Node
 * does not resolve `*.localhost`, so tests send to the listener's IP and name the host (over TLS,
 * as SNI too). 10 s bound.
 */
import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** Status, headers and body of one answer. */
export interface ListenerAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/**
 * Sends `path` to `address` (default 127.0.0.1):`port` with `host` as the Host header, an optional
 * method, headers and urlencoded form body; redirects are not followed.
 */
export function sendToListener(
  port: number,
  host: string,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    form?: URLSearchParams;
    address?: string;
  } = {},
): Promise<ListenerAnswer> {
  const body = options.form?.toString();
  const headers: Record<string, string> = { host, ...options.headers };
  if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: options.address ?? '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers,
        agent: false,
        timeout: 10_000,
      },
      (res) => readAnswer(res, resolve),
    );
    req.on('timeout', () => req.destroy(new Error(`${host}${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** An answer over TLS, with the certificate the listener presented. */
export interface TlsListenerAnswer extends ListenerAnswer {
  /** The peer certificate's subject CN and subjectAltName (`DNS:a, DNS:b`). */
  readonly certificate: { readonly commonName: string; readonly subjectAltName: string };
}

/**
 * Sends `path` over TLS to `address` (default 127.0.0.1):`port` with `host` as both SNI and Host
 * header, trusting only `caPem` (so the certificate must chain to it and name `host`). 10 s bound.
 */
export function sendTlsToListener(
  port: number,
  host: string,
  path: string,
  caPem: string,
  options: { address?: string } = {},
): Promise<TlsListenerAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: options.address ?? '127.0.0.1',
        port,
        path,
        servername: host,
        headers: { host },
        ca: caPem,
        agent: false,
        timeout: 10_000,
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        readAnswer(res, (answer) =>
          resolve({
            ...answer,
            certificate: {
              commonName: String(peer.subject?.CN ?? ''),
              subjectAltName: peer.subjectaltname ?? '',
            },
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`https://${host}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Reads `res` to its end and hands its status, headers and body to `done`. */
function readAnswer(res: IncomingMessage, done: (answer: ListenerAnswer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () =>
    done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
  );
}
