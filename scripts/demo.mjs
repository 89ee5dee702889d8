// `npm start`: runs a small demo upstream on 127.0.0.1:9080 and Portcullis all-in-one in front of
// it with examples/all-in-one.yaml. Then: curl -H 'Host: demo.localhost' http://127.0.0.1:8080/
// Ctrl-C stops both (Portcullis drains Envoy first).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const upstream = createServer((req, res) => {
  if (req.url === '/healthz') {
    res.end('ok\n');
    return;
  }
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify(
      {
        message: 'Hello from the Portcullis demo upstream',
        method: req.method,
        url: req.url,
        headers: req.headers,
      },
      null,
      2,
    ) + '\n',
  );
});
upstream.listen(9080, '127.0.0.1', () => {
  console.log('demo upstream listening on http://127.0.0.1:9080');
  const child = spawn(process.execPath, ['bin/portcullis.mjs', '--config', 'examples/all-in-one.yaml'], {
    cwd: root,
    stdio: 'inherit',
  });
  console.log("Portcullis starting; try: curl -H 'Host: demo.localhost' http://127.0.0.1:8080/");
  const stop = () => child.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => {
    upstream.close();
    process.exit(code ?? 0);
  });
});
upstream.on('error', (err) => {
  console.error(`demo upstream cannot listen on 127.0.0.1:9080: ${err.message}`);
  process.exit(1);
});
