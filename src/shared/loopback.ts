import { isIP } from 'node:net';

/**
 * Whether `address` is a loopback IP literal: 127.0.0.0/8 or ::1 (either spelling; IPv6 with or
 * without the brackets a URL's hostname carries). Host names, `localhost` included, are not: the
 * callers decide what a name may mean.
 */
export function isLoopbackIp(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return isIP(bare) === 6 && (bare === '::1' || bare === '0:0:0:0:0:0:0:1');
}
