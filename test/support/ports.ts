import { createServer } from 'node:net';

/**
 * Returns a TCP port that was free on 127.0.0.1 a moment ago: the kernel picks one for a
 * listener on port 0, which is then closed. Another process can still take it before the caller
 * binds, so prefer letting the server under test bind port 0 itself when it can.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close((err) => (err === undefined ? resolve(port) : reject(err)));
    });
  });
}
