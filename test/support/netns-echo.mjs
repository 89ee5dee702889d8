// The echo upstream of a network-namespace test host (netns-host.ts), run inside that namespace by
// `ip netns exec`: answers every request with JSON {id, method, path, url, headers}, as
// upstreams.ts's echo does, and prints `port <n>` once it listens. Arguments: <id> <address>.
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';

const [id, address] = process.argv.slice(2);
const server = createServer((req, res) => {
  req.resume();
  const url = req.url ?? '/';
  const body = JSON.stringify({ id, method: req.method, path: url.split('?')[0], url, headers: req.headers });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, address, () => process.stdout.write(`port ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
