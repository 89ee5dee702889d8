import { productModule } from './product.js';

/**
 * The id of bench session `index`: `portcullis-child.ts` puts sessions under these ids, and suites
 * name the same sessions in cookies and sign-out tokens. One place, so the two never drift apart.
 */
export function benchSessionId(index: number): string {
  return `bench-session-${index}`;
}

/** What a client presents for bench sessions, computed with the product's own codecs. */
export interface BenchCredentials {
  /** The `Cookie` header of bench session `index` (`_portcullis=<handle>`). */
  cookie(index: number): string;
  /** The sign-out CSRF token of bench session `index` (the `portcullis_csrf` form field). */
  signOutToken(index: number): string;
}

/** The parts of the product's handle and sign-out-token modules used here. */
interface HandleModule {
  SessionHandles: new (sharedSecret: Uint8Array) => { issue(sessionId: string): string };
}
interface SignOutTokenModule {
  signOutToken(sharedSecret: Uint8Array, sessionId: string): string;
}

/**
 * Cookies and sign-out tokens for bench sessions under `secretBase64` (the config's
 * `shared_secret`), from the measured checkout's own `SessionHandles` and `signOutToken` (compiled
 * or source, see `productModule`), so the benchmark presents exactly what a browser would.
 */
export async function benchCredentials(root: string, secretBase64: string): Promise<BenchCredentials> {
  const secret = Buffer.from(secretBase64, 'base64');
  const { SessionHandles } = (await import(productModule(root, 'session/handle'))) as HandleModule;
  const tokens = (await import(
    productModule(root, 'authenticate/pages/sign-out-token')
  )) as SignOutTokenModule;
  const handles = new SessionHandles(secret);
  return {
    cookie: (index) => `_portcullis=${handles.issue(benchSessionId(index))}`,
    signOutToken: (index) => tokens.signOutToken(secret, benchSessionId(index)),
  };
}
