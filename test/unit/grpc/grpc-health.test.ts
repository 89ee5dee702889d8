// The gRPC health service (grpc-health.ts) through a grpc-js client of grpc-health-check's own
// service definition, on a server with the production gate (health is open; nothing else is).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { service as HEALTH_SERVICE } from 'grpc-health-check';
import { registerHealth, type HealthStatus } from '../../../src/grpc/grpc-health.js';
import { grpcServerOptions } from '../../../src/grpc/grpc-limits.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { waitFor } from '../../support/wait.js';

const AUTHORIZATION = 'envoy.service.auth.v3.Authorization';
const DATABROKER = 'portcullis.databroker.v1.Databroker';

interface HealthClient extends grpc.Client {
  check(
    request: { service: string },
    callback: (err: grpc.ServiceError | null, response?: { status: string }) => void,
  ): void;
  watch(request: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}
const Health = grpc.makeClientConstructor(
  HEALTH_SERVICE as unknown as grpc.ServiceDefinition,
  'Health',
) as unknown as new (address: string, credentials: grpc.ChannelCredentials) => HealthClient;

let server: grpc.Server;
let health: HealthStatus;
let client: HealthClient;

before(async () => {
  server = new grpc.Server(
    grpcServerOptions({
      envoyCredential: 'x',
      internalSecret: () => new Uint8Array(32),
      logger: silentLogger,
    }),
  );
  health = registerHealth(server);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    ),
  );
  client = new Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
});

after(() => {
  client.close();
  server.forceShutdown();
});

/** The status Check answers for `service`, or the gRPC error code's name. */
function check(service: string): Promise<string> {
  return new Promise((resolve) =>
    client.check({ service }, (err, response) =>
      resolve(err === null ? String(response?.status) : grpc.status[err.code]),
    ),
  );
}

test('Check: the process is NOT_SERVING until set, named services are NOT_FOUND until set', async () => {
  assert.equal(await check(''), 'NOT_SERVING');
  assert.equal(await check(AUTHORIZATION), 'NOT_FOUND');
  health.set('', true);
  health.set(AUTHORIZATION, true);
  health.set(DATABROKER, false);
  assert.equal(await check(''), 'SERVING');
  assert.equal(await check(AUTHORIZATION), 'SERVING');
  assert.equal(await check(DATABROKER), 'NOT_SERVING');
  assert.equal(await check('some.other.Service'), 'NOT_FOUND');
});

test('Watch streams the current status and every change', async (t) => {
  health.set(DATABROKER, false);
  const stream = client.watch({ service: DATABROKER });
  t.after(() => stream.cancel());
  const seen: string[] = [];
  stream.on('data', (response: { status: string }) => seen.push(response.status));
  stream.on('error', () => undefined);
  await waitFor(async () => seen.length === 1, { what: 'the current status' });
  health.set(DATABROKER, true);
  health.set(DATABROKER, false);
  await waitFor(async () => seen.length === 3, { what: 'two changes' });
  assert.deepEqual(seen, ['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
});

test('Watch of a service never set answers SERVICE_UNKNOWN and ends (no name is kept)', async () => {
  const stream = client.watch({ service: 'x'.repeat(100_000) });
  const seen: string[] = [];
  stream.on('data', (response: { status: string }) => seen.push(response.status));
  const ended = await new Promise<string>((resolve) => {
    stream.on('end', () => resolve('end'));
    stream.on('error', (err: grpc.ServiceError) => resolve(grpc.status[err.code]));
  });
  assert.equal(ended, 'end');
  assert.deepEqual(seen, ['SERVICE_UNKNOWN']);
});
