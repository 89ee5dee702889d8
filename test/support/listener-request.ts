/**
 * One HTTP/1.1 exchange with an Envoy listener on a loopback address, with any Host header: Node
 * does not resolve `*.localhost`, so tests send to the listener's IP and name the host. 10 s bound.
 */
import { request, type IncomingHttpHeaders } from 'node:http';

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
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${host}${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}
