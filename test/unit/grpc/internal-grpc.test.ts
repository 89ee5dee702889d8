// The gRPC server gate (grpc-limits.ts) with internal tokens (internal-grpc.ts), through a real
// grpc-js server and client on loopback: each method family takes only its own credential, a
// streaming databroker call without a valid token never reaches its handler, and tokens are minted
// and verified once, not per call (security-threats.md 1.1 item 11).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { grpcServerOptions, grpcMethodPolicy } from '../../../src/grpc/grpc-limits.js';
import {
  INTERNAL_TOKEN_METADATA_KEY,
  internalCallAuthorizer,
  internalCallCredentials,
} from '../../../src/grpc/internal-grpc.js';
import { mintInternalToken } from '../../../src/contract/internal-token.js';
import { deriveGrpcCredential, grpcCredentialValue } from '../../../src/contract/grpc-credential.js';
import { deriveSigningKey } from '../../../src/keys/signing-key.js';
import { recordingLogger } from '../../../src/shared/logger.js';

const SECRET = new Uint8Array(32).fill(5);
const ENVOY_CREDENTIAL = deriveGrpcCredential(SECRET);

/** A service definition with raw-bytes messages, so the test needs no .proto. */
function method(path: string, responseStream: boolean): grpc.MethodDefinition<Buffer, Buffer> {
  const same = (value: Buffer): Buffer => value;
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: same,
    requestDeserialize: same,
    responseSerialize: same,
    responseDeserialize: same,
  };
}
const SERVICE: grpc.ServiceDefinition = {
  Get: method('/portcullis.databroker.v1.Databroker/Get', false),
  Watch: method('/portcullis.databroker.v1.Databroker/Watch', true),
  Check: method('/envoy.service.auth.v3.Authorization/Check', false),
  Other: method('/other.v1.Service/Call', false),
};

const handled: string[] = [];
const logger = recordingLogger();
let server: grpc.Server;
let address: string;

before(async () => {
  server = new grpc.Server(
    grpcServerOptions({ envoyCredential: ENVOY_CREDENTIAL, internalSecret: () => SECRET, logger }),
  );
  const unary =
    (name: string): grpc.handleUnaryCall<Buffer, Buffer> =>
    (_call, callback) => {
      handled.push(name);
      callback(null, Buffer.from('ok'));
    };
  server.addService(SERVICE, {
    Get: unary('Get'),
    Check: unary('Check'),
    Other: unary('Other'),
    Watch: ((call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      handled.push('Watch');
      call.write(Buffer.from('event'));
      call.end();
    }) as grpc.handleServerStreamingCall<Buffer, Buffer>,
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  address = `127.0.0.1:${port}`;
});

after(() => server.forceShutdown());

const Client = grpc.makeGenericClientConstructor(SERVICE, 'Test');

/** The gRPC status of one unary call of `name` with `options` (0 = OK), and whether its handler ran. */
async function call(
  name: 'Get' | 'Check' | 'Other',
  options: { metadata?: grpc.Metadata; credentials?: grpc.CallCredentials } = {},
): Promise<{ code: number; handled: boolean }> {
  const client = new Client(address, grpc.credentials.createInsecure());
  const before = handled.length;
  try {
    const code = await new Promise<number>((resolve) => {
      const callOptions = options.credentials === undefined ? {} : { credentials: options.credentials };
      const unary = client[name] as (
        request: Buffer,
        metadata: grpc.Metadata,
        options: grpc.CallOptions,
        callback: (err: grpc.ServiceError | null) => void,
      ) => void;
      unary.call(
        client,
        Buffer.from('request'),
        options.metadata ?? new grpc.Metadata(),
        callOptions,
        (err) => resolve(err === null ? grpc.status.OK : err.code),
      );
    });
    return { code, handled: handled.length > before };
  } finally {
    client.close();
  }
}

function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set(INTERNAL_TOKEN_METADATA_KEY, `Bearer ${token}`);
  return metadata;
}

test('method policies: Envoy services, the databroker, health open, anything else refused', () => {
  assert.equal(grpcMethodPolicy('/envoy.service.auth.v3.Authorization/Check'), 'envoy');
  assert.equal(
    grpcMethodPolicy('/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources'),
    'envoy',
  );
  assert.equal(grpcMethodPolicy('/portcullis.databroker.v1.Databroker/Get'), 'databroker');
  assert.equal(grpcMethodPolicy('/grpc.health.v1.Health/Check'), 'open');
  assert.equal(grpcMethodPolicy('/grpc.health.v1.HealthX/Check'), 'refused');
  assert.equal(grpcMethodPolicy('/portcullis.databrokerx.v1.Databroker/Get'), 'refused');
  assert.equal(grpcMethodPolicy('/other.v1.Service/Call'), 'refused');
});

test('a databroker call with internal call credentials (per call, insecure channel) is answered', async () => {
  const credentials = internalCallCredentials(() => SECRET, 'databroker');
  assert.deepEqual(await call('Get', { credentials }), { code: grpc.status.OK, handled: true });
  // The same credentials again: the held token (and the server's remembered verification).
  assert.deepEqual(await call('Get', { credentials }), { code: grpc.status.OK, handled: true });
});

test('the databroker refuses no token, another audience, an expired token, a user assertion and the Envoy credential', async () => {
  const now = Date.now();
  const key = deriveSigningKey(SECRET);
  const assertion = await new SignJWT({
    iss: 'portcullis-internal',
    aud: 'portcullis-databroker',
    sub: 'user',
  })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key.privateKey);
  const envoy = new grpc.Metadata();
  envoy.set('authorization', grpcCredentialValue(ENVOY_CREDENTIAL));
  const refused = [
    new grpc.Metadata(),
    bearer(await mintInternalToken(SECRET, 'authorize', now)),
    bearer(await mintInternalToken(SECRET, 'databroker', now - 10 * 60_000)),
    bearer(await mintInternalToken(new Uint8Array(32).fill(6), 'databroker', now)),
    bearer(assertion),
    envoy,
  ];
  for (const metadata of refused) {
    assert.deepEqual(await call('Get', { metadata }), { code: grpc.status.UNAUTHENTICATED, handled: false });
  }
  const logged = JSON.stringify(logger.records);
  assert.ok(logged.includes('gRPC call refused (UNAUTHENTICATED)'));
  assert.ok(!logged.includes(assertion) && !logged.includes(ENVOY_CREDENTIAL), 'no token is logged');
});

test('a streaming databroker call without a valid token is refused before its handler runs', async (t) => {
  const client = new Client(address, grpc.credentials.createInsecure());
  t.after(() => client.close());
  const watch = (
    metadata: grpc.Metadata,
    options: grpc.CallOptions = {},
  ): Promise<{ code: number; events: number }> =>
    new Promise((resolve) => {
      const stream = (
        client['Watch'] as (
          r: Buffer,
          m: grpc.Metadata,
          o: grpc.CallOptions,
        ) => grpc.ClientReadableStream<Buffer>
      ).call(client, Buffer.from('watch'), metadata, options);
      let events = 0;
      stream.on('data', () => (events += 1));
      stream.on('error', (err: grpc.ServiceError) => resolve({ code: err.code, events }));
      stream.on('end', () => resolve({ code: grpc.status.OK, events }));
    });
  const before = handled.filter((name) => name === 'Watch').length;
  assert.deepEqual(await watch(new grpc.Metadata()), { code: grpc.status.UNAUTHENTICATED, events: 0 });
  assert.deepEqual(await watch(bearer(await mintInternalToken(SECRET, 'authorize', Date.now()))), {
    code: grpc.status.UNAUTHENTICATED,
    events: 0,
  });
  assert.equal(handled.filter((name) => name === 'Watch').length, before, 'the handler never ran');
  const credentials = internalCallCredentials(() => SECRET, 'databroker');
  assert.deepEqual(await watch(new grpc.Metadata(), { credentials }), { code: grpc.status.OK, events: 1 });
});

test('Check takes only the Envoy credential, never an internal token', async () => {
  const envoy = new grpc.Metadata();
  envoy.set('authorization', grpcCredentialValue(ENVOY_CREDENTIAL));
  assert.deepEqual(await call('Check', { metadata: envoy }), { code: grpc.status.OK, handled: true });
  const token = await mintInternalToken(SECRET, 'databroker', Date.now());
  assert.deepEqual(await call('Check', { metadata: bearer(token) }), {
    code: grpc.status.UNAUTHENTICATED,
    handled: false,
  });
  assert.deepEqual(await call('Check'), { code: grpc.status.UNAUTHENTICATED, handled: false });
});

test('a method without a policy is refused whatever it presents', async () => {
  const credentials = internalCallCredentials(() => SECRET, 'databroker');
  assert.deepEqual(await call('Other', { credentials }), {
    code: grpc.status.PERMISSION_DENIED,
    handled: false,
  });
  const envoy = new grpc.Metadata();
  envoy.set('authorization', grpcCredentialValue(ENVOY_CREDENTIAL));
  assert.deepEqual(await call('Other', { metadata: envoy }), {
    code: grpc.status.PERMISSION_DENIED,
    handled: false,
  });
});

test('call credentials hold one token until a minute before expiry, and remint on a new secret', async () => {
  let now = Date.UTC(2026, 0, 1);
  let secret = SECRET;
  const credentials = internalCallCredentials(
    () => secret,
    'databroker',
    () => now,
  );
  const token = async (): Promise<string> => {
    const metadata = await credentials.generateMetadata({ service_url: 'x', method_name: 'Get' });
    const values = metadata.get('authorization');
    assert.equal(values.length, 1);
    return String(values[0]);
  };
  const [first, concurrent] = await Promise.all([token(), token()]);
  assert.match(first, /^Bearer ey/);
  assert.equal(concurrent, first, 'concurrent calls share one mint');
  now += 3 * 60_000 + 59_000;
  assert.equal(await token(), first, 'held until a minute before expiry');
  now += 1_000;
  const second = await token();
  assert.notEqual(second, first, 'reminted within a minute of expiry');
  secret = new Uint8Array(32).fill(9);
  assert.notEqual(await token(), second, 'reminted when the secret changes');
});

test('the authorizer remembers verified tokens until expiry (a synchronous answer), bounded, per secret', async () => {
  let now = Date.now();
  let secret = SECRET;
  const authorize = internalCallAuthorizer(
    () => secret,
    'databroker',
    () => now,
  );
  const token = await mintInternalToken(SECRET, 'databroker', now);
  const first = authorize(bearer(token));
  assert.ok(first instanceof Promise, 'an unknown token is verified');
  assert.equal(await first, true);
  assert.equal(authorize(bearer(token)), true, 'a verified token is answered from memory');
  // Malformed metadata is refused at once.
  assert.equal(authorize(new grpc.Metadata()), false);
  const twice = bearer(token);
  twice.add('authorization', `Bearer ${token}`);
  assert.equal(authorize(twice), false);
  // 64 other tokens push the first out.
  for (let i = 1; i <= 64; i += 1) {
    assert.equal(
      await authorize(bearer(await mintInternalToken(SECRET, 'databroker', now - i * 1000))),
      true,
    );
  }
  const again = authorize(bearer(token));
  assert.ok(again instanceof Promise, 'the oldest verification was forgotten');
  assert.equal(await again, true);
  assert.equal(authorize(bearer(token)), true);
  // Past its expiry the remembered token is verified again, and refused.
  now += 5 * 60_000 + 31_000;
  assert.equal(await authorize(bearer(token)), false);
  // A new secret forgets everything verified under the old one.
  now -= 5 * 60_000 + 31_000;
  assert.equal(await authorize(bearer(token)), true);
  assert.equal(authorize(bearer(token)), true);
  secret = new Uint8Array(32).fill(9);
  assert.equal(await authorize(bearer(token)), false);
});
