// `certificate_authority` without `tls_derive`: an `https://` databroker_service_url is reached
// over TLS verified against that CA and the URL's own host name (a TLS-terminating load balancer
// or mesh in front of the databroker). The client is the one the runtime builds
// (grpc/internal-client.ts); the server is a grpc-js databroker whose certificate a test CA
// signed. Another CA, or a certificate for another name, fails the handshake.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { createDatabrokerClient } from '../../src/databroker/grpc/client.js';
import { registerDatabrokerService } from '../../src/databroker/grpc/service.js';
import { MemoryBackend } from '../../src/databroker/memory-backend.js';
import { internalClient } from '../../src/grpc/internal-client.js';
import { internalCallAuthorizer } from '../../src/grpc/internal-grpc.js';
import { silentLogger } from '../../src/shared/logger.js';
import { StoreUnavailableError, type RecordBackend } from '../../src/session/records.js';
import { generateTestCa, issueTestCertificate, type TestCertificate } from '../support/test-certs.js';

const SECRET = Buffer.alloc(32, 9);
const CA = generateTestCa();
const OTHER_CA = generateTestCa('Another test CA');

/** A databroker on 127.0.0.1 serving TLS with `certificate` (no client certificate asked for). */
async function startDatabroker(certificate: TestCertificate): Promise<{ port: number; stop: () => void }> {
  const server = new grpc.Server();
  registerDatabrokerService(server, new MemoryBackend(), {
    authorize: internalCallAuthorizer(() => SECRET, 'databroker'),
    logger: silentLogger,
  });
  const credentials = grpc.ServerCredentials.createSsl(
    null,
    [{ private_key: Buffer.from(certificate.keyPem), cert_chain: Buffer.from(certificate.certPem) }],
    false,
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', credentials, (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  return { port, stop: () => server.forceShutdown() };
}

/** The runtime's databroker client for `url`, trusting `caPem` (certificate_authority, no tls_derive). */
function client(url: URL, caPem: string): RecordBackend {
  return createDatabrokerClient({
    address: `${url.hostname}:${url.port}`,
    ...internalClient(SECRET, undefined, caPem).channel('databroker', url),
    timeoutMs: 2_000,
    logger: silentLogger,
  });
}

test('an https databroker_service_url with certificate_authority is reached over TLS verified by that CA', async (t) => {
  const databroker = await startDatabroker(issueTestCertificate(CA, 'localhost'));
  const url = new URL(`https://localhost:${databroker.port}`);
  const trusted = client(url, CA.certPem);
  const stranger = client(url, OTHER_CA.certPem);
  t.after(async () => {
    await Promise.all([trusted.close(), stranger.close()]);
    databroker.stop();
  });
  const put = await trusted.put('session', 'ca', 'sealed', { ttlMs: 60_000 });
  assert.deepEqual(await trusted.get('session', 'ca'), put);
  await assert.rejects(
    stranger.ping(),
    StoreUnavailableError,
    'a client trusting another CA fails its handshake',
  );
});

test("the certificate must name the URL's host: no name override as with tls_derive", async (t) => {
  const databroker = await startDatabroker(issueTestCertificate(CA, 'databroker.internal'));
  const misnamed = client(new URL(`https://localhost:${databroker.port}`), CA.certPem);
  t.after(async () => {
    await misnamed.close();
    databroker.stop();
  });
  await assert.rejects(misnamed.ping(), StoreUnavailableError, 'a certificate for another name is refused');
});
