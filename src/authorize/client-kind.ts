/** How a client wants errors: a browser (HTML, sign-in redirects), an API (JSON, 401) or gRPC. */
export type ClientKind = 'browser' | 'json' | 'grpc';

/**
 * Classifies a request by its headers. gRPC by content type; an API client when it sends
 * X-Requested-With or its Accept header prefers JSON over HTML; a browser otherwise (including
 * no Accept header or only `*∕*`), because a redirect to sign in is what a person needs.
 */
export function clientKind(headers: Readonly<Record<string, string>>): ClientKind {
  const contentType = headers['content-type'] ?? '';
  if (contentType.startsWith('application/grpc')) return 'grpc';
  if (headers['x-requested-with'] !== undefined) return 'json';
  const accept = headers.accept;
  if (accept === undefined) return 'browser';
  const json = quality(accept, 'application/json');
  const html = quality(accept, 'text/html');
  return json > html ? 'json' : 'browser';
}

/** The q-value `accept` gives `type` (exact type, then `major/*`, then `*∕*`). */
function quality(accept: string, type: string): number {
  const major = `${type.slice(0, type.indexOf('/'))}/*`;
  let best = -1;
  let specificity = -1;
  for (const range of accept.split(',')) {
    const [media = '', ...params] = range.trim().toLowerCase().split(';');
    const level = media === type ? 2 : media === major ? 1 : media === '*/*' ? 0 : -1;
    if (level < 0 || level < specificity) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = q === undefined ? 1 : Number(q.slice(2));
    if (level > specificity || value > best) {
      best = Number.isNaN(value) ? 0 : value;
      specificity = level;
    }
  }
  return best;
}

/**
 * How the client of `request` wants errors: a CONNECT comes from a tunnel client (`portcullis tcp`
 * or another program), never a person at a browser, so it gets JSON (a 401 it can act on, never a
 * sign-in redirect); other requests by their headers (`clientKind`).
 */
export function requestClientKind(request: {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
}): ClientKind {
  return request.method === 'CONNECT' ? 'json' : clientKind(request.headers);
}
