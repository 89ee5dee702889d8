// Malformed ext_authz Checks (issue 33, info): seeded random CheckRequests over a real gRPC
// connection, with every field missing, empty or strange, are each answered with a decision or
// INVALID_ARGUMENT (random bytes), never INTERNAL and never a crash; one no Envoy would send (no
// method, a host that is not an authority, a path without `/`) is denied 400. FUZZ_SEED replays.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { registerAuthorizationService } from '../../../src/authorize/ext-authz/authorization-service.js';
import { isWellFormed } from '../../../src/authorize/request-shape.js';
import { messageType } from '../../../src/proto/proto-root.js';
import { recordingLogger } from '../../../src/shared/logger.js';
import { authzFixture, FIXTURE_ROUTE } from '../../support/authz-fixture.js';
import { TEST_GRPC_CREDENTIAL, credentialClientOptions } from '../../support/grpc-credential.js';
import { seededRandom } from '../../support/seeded-random.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 0x7fffffff);
const { authorize, handles } = authzFixture(3);
const logger = recordingLogger();
let server: grpc.Server;
let client: grpc.Client;

before(async () => {
  server = new grpc.Server();
  registerAuthorizationService(server, authorize, logger, TEST_GRPC_CREDENTIAL);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), credentialClientOptions());
});

after(() => {
  client.close();
  server.forceShutdown();
});

/** The gRPC code and, for an answer, the denied HTTP status (0: allowed). */
function call(bytes: Uint8Array): Promise<{ code: number; status: number | undefined }> {
  const responseType = messageType('envoy.service.auth.v3.CheckResponse');
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      '/envoy.service.auth.v3.Authorization/Check',
      (value: Uint8Array) => Buffer.from(value),
      (value: Buffer) => value,
      bytes,
      { deadline: Date.now() + 5000 },
      (err, response) => {
        if (err) return resolve({ code: err.code, status: undefined });
        const decoded = responseType.toObject(responseType.decode(response as Buffer)) as {
          denied_response?: { status?: { code?: number } };
        };
        resolve({ code: grpc.status.OK, status: decoded.denied_response?.status?.code ?? 0 });
      },
    ),
  );
}

test('isWellFormed: what Envoy sends passes; no method, a broken host or a relative path does not', () => {
  const base = { routeId: undefined, requestId: 'r', query: '', headers: {}, sourceIp: '' };
  const shape = (method: string, scheme: string, host: string, path: string) =>
    isWellFormed({ ...base, method, scheme, host, path });
  assert.ok(shape('GET', 'https', 'app.example.com', '/'));
  assert.ok(shape('GET', 'http', 'APP.example.com:8443', '/x'));
  assert.ok(shape('GET', '', '[::1]:80', '/'));
  assert.ok(shape('CONNECT', 'https', 'db.example.com:5432', ''));
  assert.ok(!shape('', 'https', 'app.example.com', '/'));
  assert.ok(!shape('GET', 'ftp', 'app.example.com', '/'));
  for (const host of ['', 'a b', 'app.example.com/x', 'u@app.example.com', 'app.example.com:99999', '::'])
    assert.ok(!shape('GET', 'https', host, '/'), host);
  assert.ok(!shape('GET', 'https', 'app.example.com', ''));
  assert.ok(!shape('GET', 'https', 'app.example.com', 'x'));
});

test(`2,000 random Checks: a decision or INVALID_ARGUMENT each, malformed ones 400 (seed ${SEED})`, async (t) => {
  t.diagnostic(`check-fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);
  const random = seededRandom(SEED);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const values = [
    ...['', '/', 'x', '\u0000', '%zz', 'a'.repeat(70_000), '\ud800', 'ü', '::', '[::1]:80', 'APP.TEST:99999'],
    ...[
      'app.test',
      'app.test.',
      'auth.test',
      '?',
      '/x?y#z',
      '#',
      '/.portcullis/user',
      '/.portcullis/sign_out',
    ],
    ...[
      `Portcullis ${handles.issue('x')}`,
      'Portcullis ',
      '_portcullis=',
      `_portcullis=${handles.issue('x')}`,
    ],
    ...[
      'a=1;;;=;',
      'application/grpc',
      'text/html;q=2, application/json;q=',
      'GET',
      'CONNECT',
      'https',
      'HTTP',
    ],
  ];
  const headerNames = ['accept', 'cookie', 'authorization', 'content-type', 'x-request-id', 'origin', 'te'];
  const requestType = messageType('envoy.service.auth.v3.CheckRequest');
  const seen = new Map<string, number>();
  for (let index = 0; index < 2000; index++) {
    let bytes: Uint8Array;
    let wellFormed: boolean | undefined;
    if (random() < 0.05) {
      bytes = Buffer.from(
        Array.from({ length: Math.floor(random() * 64) }, () => Math.floor(random() * 256)),
      );
    } else {
      const headers = Object.fromEntries(
        headerNames.filter(() => random() < 0.4).map((name) => [name, pick(values)]),
      );
      const http: Record<string, unknown> = { headers };
      for (const field of ['id', 'method', 'host', 'path', 'scheme', 'query', 'protocol'])
        if (random() < 0.7) http[field] = pick(values);
      const extensions = random() < 0.8 ? { route_id: pick([FIXTURE_ROUTE, 'zz', '']) } : {};
      bytes = requestType
        .encode(requestType.fromObject({ attributes: { request: { http }, context_extensions: extensions } }))
        .finish();
      const path = String(http.path ?? '');
      wellFormed = isWellFormed({
        routeId: undefined,
        requestId: '',
        method: String(http.method ?? ''),
        scheme: String(http.scheme ?? '').toLowerCase(),
        host: String(http.host ?? ''),
        path: path.split(/[?#]/)[0] ?? '',
        query: '',
        headers: {},
        sourceIp: '',
      });
    }
    const { code, status } = await call(bytes);
    const key = `${code}/${status}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
    assert.ok(
      code === grpc.status.OK || code === grpc.status.INVALID_ARGUMENT,
      `gRPC ${code} for input ${index}`,
    );
    if (wellFormed === false) assert.equal(status, 400, `input ${index}: malformed, answered ${status}`);
  }
  t.diagnostic(`outcomes (gRPC code/HTTP status): ${JSON.stringify(Object.fromEntries(seen))}`);
  assert.deepEqual(
    logger.records.filter((record) => record.level === 'error'),
    [],
    'no Check failed inside Portcullis',
  );
});
