/** Small OwnResponse builders shared by the sign-in handlers (pages come from pages/pages.ts). */
import type { OwnResponse } from './types.js';

/** A 302 to `location`, with any Set-Cookie values. */
export function redirectResponse(location: string, setCookies: readonly string[] = []): OwnResponse {
  return { status: 302, headers: [['location', location]], setCookies, body: '' };
}

/** A text/plain answer (programmatic clients read these). */
export function textResponse(
  status: number,
  body: string,
  headers: readonly (readonly [string, string])[] = [],
): OwnResponse {
  return {
    status,
    headers: [['content-type', 'text/plain; charset=utf-8'], ...headers],
    setCookies: [],
    body: body.endsWith('\n') ? body : `${body}\n`,
  };
}
