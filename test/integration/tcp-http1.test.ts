// `portcullis tcp --no-http2` through the real Envoy: every tunnel is an HTTP/1.1 CONNECT on its
// own TLS connection (the default chain, not the tunnel chain's HTTP/2), those connections resume
// one TLS session instead of each paying a full handshake (Envoy's session_reused counter), bulk
// bytes arrive intact, and what a client's half-close does to the reply is pinned down.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileTokenCache, tokenCachePath } from '../../src/cli/token-cache.js';
import { adminRequest } from '../../src/envoy/admin.js';
import { adaSession } from '../support/portcullis.js';
import { SIGN_IN } from '../support/sign-in-config.js';
import {
  echoRoundTrip,
  echoTransfer,
  startClient,
  startCountingEcho,
  type ClientProcess,
  type CountingEcho,
} from '../support/tcp-parts.js';
import { startTlsPortcullis, type TlsPortcullis } from '../support/tcp-portcullis.js';

const DB = 'db.localhost:5432';
const MIB = 1024 * 1024;

describe('portcullis tcp --no-http2 through the real Envoy', () => {
  let echo: CountingEcho;
  let portcullis: TlsPortcullis;
  let client: ClientProcess;
  let port: number;

  before(async () => {
    echo = await startCountingEcho();
    portcullis = await startTlsPortcullis(['db.localhost'], () => ({
      ...SIGN_IN,
      routes: [
        { from: `tcp+https://${DB}`, to: `tcp://127.0.0.1:${echo.port}`, allow_any_authenticated_user: true },
      ],
    }));
    const ada = adaSession();
    await portcullis.running.sessions.put(ada);
    const home = join(portcullis.dir, 'home');
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, 'config') };
    await fileTokenCache(tokenCachePath(env)).put(
      'db.localhost',
      portcullis.running.authorize.handles().issue(ada.id),
    );
    client = startClient(
      [
        'tcp',
        DB,
        '--via',
        `https://127.0.0.1:${portcullis.port}`,
        '--ca-cert',
        portcullis.certificate.certFile,
        '--no-browser',
        '--no-http2',
      ],
      env,
    );
    port = await client.listeningPort();
  });

  after(async () => {
    await client?.stop();
    await portcullis?.stop();
    await echo?.close();
  });

  /** The sum of Envoy's counters whose name ends in `.ssl.<name>` (the listener's TLS). */
  async function tlsCount(name: string): Promise<number> {
    const filter = encodeURIComponent(`^listener\\..*\\.ssl\\.${name}$`);
    const { body } = await adminRequest(portcullis.adminUrl, `/stats?format=json&filter=${filter}`, {
      timeoutMs: 2_000,
    });
    const stats = (JSON.parse(body) as { stats: { value?: number }[] }).stats;
    return stats.reduce((sum, stat) => sum + (stat.value ?? 0), 0);
  }

  test('each tunnel is its own TLS connection, and after the first they resume its session', async () => {
    assert.equal(await echoRoundTrip(port, 'first\n'), 'first\n');
    const [handshakes, reused, connections] = [
      await tlsCount('handshake'),
      await tlsCount('session_reused'),
      echo.connections(),
    ];
    for (let i = 0; i < 5; i += 1) assert.equal(await echoRoundTrip(port, `again ${i}\n`), `again ${i}\n`);
    assert.equal(echo.connections(), connections + 5);
    assert.equal(await tlsCount('handshake'), handshakes + 5, 'one TLS connection per tunnel');
    assert.equal(await tlsCount('session_reused'), reused + 5, client.stderr());
  });

  test('a 100 MiB transfer arrives intact', async (t) => {
    const result = await echoTransfer(port, 100 * MIB, 120_000);
    t.diagnostic(`100 MiB echoed through the HTTP/1.1 tunnel in ${Math.round(result.ms)} ms`);
    assert.equal(result.receivedBytes, 100 * MIB);
    assert.equal(result.receivedSha256, result.sentSha256, 'the bytes came back changed');
  });

  test('a client that half-closes right after sending: what comes back', async (t) => {
    const answers: string[] = [];
    for (let i = 0; i < 5; i += 1) answers.push(await echoRoundTrip(port, `half-closed ${i}\n`, true));
    t.diagnostic(JSON.stringify(answers));
  });
});
