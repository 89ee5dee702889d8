/**
 * proxy-from-env@2 ships no types (@types/proxy-from-env describes v1, whose one function is the
 * same). It reads HTTPS_PROXY / ALL_PROXY / NO_PROXY (either case) from process.env at call time.
 */
declare module 'proxy-from-env' {
  /** The proxy URL for `url` per the *_PROXY and NO_PROXY variables, or '' for a direct connection. */
  export function getProxyForUrl(url: string | URL): string;
}
