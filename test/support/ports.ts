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

/**
 * A port `p` such that `p` and `p + 1` were both free on 127.0.0.1 a moment ago: for a
 * `grpc_address`, since Portcullis's own HTTP server listens on the next port (IR process.ownHttp, translate/services.ts).
 * Picked below Linux's default ephemeral range (32768-60999): a port the kernel hands out (port 0
 * listeners, outgoing connections' source ports) could otherwise take `p + 1` between this check
 * and Portcullis's bind, which happened on a busy machine.
 */
export async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await portIsFree(port)) && (await portIsFree(port + 1))) return port;
  }
  throw new Error('no two consecutive free ports in 20000-32000 on 127.0.0.1 in 200 attempts');
}

/** Whether `port` can be listened on at 127.0.0.1 right now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
