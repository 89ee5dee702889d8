import { request } from 'node:http';
import { constants, type ClientHttp2Session } from 'node:http2';

/** One request's header fields as flat [name, value] pairs, so a name may repeat (several Cookie fields). */
export type Fields = readonly (readonly [string, string])[];

/** A response's status and body text. */
export interface RawAnswer {
  readonly status: number;
  readonly body: string;
}

/**
 * GET `path` over HTTP/1.1 to 127.0.0.1:`port` with exactly `fields` (no agent, no Host unless
 * `host` is given, names in the case written): for tests of what Envoy strips or refuses.
 */
export function http1Fields(
  port: number,
  host: string | undefined,
  path: string,
  fields: Fields,
): Promise<RawAnswer> {
  const headers = [...(host === undefined ? [] : ['host', host]), ...fields.flat()];
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers, setHost: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('HTTP/1.1 request timed out')));
    req.on('error', reject);
    req.end();
  });
}

/**
 * GET `path` over an HTTP/2 `session` (h2c with prior knowledge) with `fields`; a repeated name is
 * sent as several values of that field (each Cookie value its own crumb).
 */
export function http2Fields(
  session: ClientHttp2Session,
  authority: string,
  path: string,
  fields: Fields,
): Promise<RawAnswer> {
  const headers: Record<string, string | string[]> = {
    [constants.HTTP2_HEADER_METHOD]: 'GET',
    [constants.HTTP2_HEADER_PATH]: path,
    [constants.HTTP2_HEADER_SCHEME]: 'http',
    [constants.HTTP2_HEADER_AUTHORITY]: authority,
  };
  for (const [name, value] of fields) {
    const key = name.toLowerCase();
    const previous = headers[key];
    headers[key] = previous === undefined ? value : [previous, value].flat();
  }
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let status = 0;
    let body = '';
    stream.setEncoding('utf8');
    stream.setTimeout(10_000, () => stream.close(constants.NGHTTP2_CANCEL));
    stream.on('response', (response) => (status = Number(response[constants.HTTP2_HEADER_STATUS])));
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
    stream.end();
  });
}
