import { ApiException } from '@kubernetes/client-node';

/** The HTTP status of a failed API call, when the API server answered. */
export function apiStatusCode(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { statusCode?: unknown; code?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * A failed API call in one line: the status and the API server's own message, or the network
 * error. Never the whole exception: client-node's message carries response headers and bodies.
 */
export function describeKubeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = err.body;
    let message: unknown;
    try {
      message = (
        typeof body === 'string'
          ? (JSON.parse(body) as { message?: unknown })
          : (body as { message?: unknown })
      )?.message;
    } catch {
      message = undefined;
    }
    return `HTTP ${err.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === undefined ? err.message : `${err.message} (${code})`;
  }
  return String(err);
}
