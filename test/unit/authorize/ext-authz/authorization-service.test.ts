// The ext_authz Check service on grpc-js: the protobufjs codec maps CheckRequest and CheckResponse
// to the authorizer's types, and a call that fails (bytes that do not decode, an authorizer that
// throws or rejects) is answered with a gRPC error and logged, never fatal.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import {
  CHECK_METHOD_PATH,
  registerAuthorizationService,
  type Authorizer,
} from '../../../../src/authorize/ext-authz/authorization-service.js';
import { createCheckCodec } from '../../../../src/authorize/ext-authz/check-codec.js';
import type { Decision } from '../../../../src/authorize/decision.js';
import { recordingLogger } from '../../../../src/shared/logger.js';
import { messageType } from '../../../../src/proto/proto-root.js';
import { TEST_GRPC_CREDENTIAL, credentialClientOptions } from '../../../support/grpc-credential.js';

const codec = createCheckCodec();
const requestType = messageType('envoy.service.auth.v3.CheckRequest');
const responseType = messageType('envoy.service.auth.v3.CheckResponse');
const ROUTE = '0123456789abcdef';

const allow: Decision = {
  kind: 'allow',
  setHeaders: [['x-portcullis-jwt-assertion', 'token']],
  removeHeaders: ['cookie'],
  reasons: [],
};

function encodeRequest(http: Record<string, unknown>, routeId: string = ROUTE): Uint8Array {
  return requestType
    .encode(
      requestType.fromObject({
        attributes: {
          request: { http },
          context_extensions: { route_id: routeId },
          source: { address: { socket_address: { address: '10.0.0.1', port_value: 5555 } } },
        },
      }),
    )
    .finish();
}

test('a CheckRequest decodes to the parts authorization reads', () => {
  const request = codec.decodeRequest(
    encodeRequest({
      id: 'stream-7',
      method: 'GET',
      host: 'app.test',
      path: '/a/b?x=1#frag',
      scheme: 'HTTPS',
      headers: { 'x-request-id': 'req-1', cookie: 'a=b' },
    }),
  );
  assert.deepEqual(
    { ...request },
    {
      routeId: ROUTE,
      requestId: 'req-1',
      method: 'GET',
      scheme: 'https',
      host: 'app.test',
      path: '/a/b',
      query: 'x=1',
      headers: { 'x-request-id': 'req-1', cookie: 'a=b' },
      sourceIp: '10.0.0.1',
    },
  );
  const empty = codec.decodeRequest(new Uint8Array());
  assert.deepEqual(
    [empty.routeId, empty.requestId, empty.method, empty.host, empty.path, empty.sourceIp],
    [undefined, '', '', '', '', ''],
    'an empty request decodes to empty parts (denied by policy, not a crash)',
  );
  assert.equal(
    codec.decodeRequest(encodeRequest({ id: 'stream-7', path: '/' }, 'not-a-route')).routeId,
    undefined,
  );
  assert.equal(codec.decodeRequest(encodeRequest({ id: 'stream-7', path: '/' })).requestId, 'stream-7');
});

test('decisions encode as CheckResponses: allow overwrites headers, 401 is UNAUTHENTICATED', () => {
  const decode = (
    decision: Decision,
  ): Record<string, any> => // eslint-disable-line @typescript-eslint/no-explicit-any
    responseType.toObject(responseType.decode(codec.encodeResponse(decision)), { enums: String });
  const allowed = decode(allow);
  assert.equal(allowed.status?.code ?? 0, 0);
  assert.deepEqual(allowed.ok_response.headers, [
    {
      header: { key: 'x-portcullis-jwt-assertion', value: 'token' },
      append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
    },
  ]);
  assert.deepEqual(allowed.ok_response.headers_to_remove, ['cookie']);
  const deny = (status: number): Decision => ({
    kind: 'deny',
    status,
    headers: [['content-type', 'text/plain']],
    body: 'no',
    reasons: ['because'],
  });
  const unauthenticated = decode(deny(401));
  assert.equal(unauthenticated.status.code, 16);
  assert.equal(unauthenticated.status.message, 'because');
  assert.equal(unauthenticated.denied_response.status.code, 'Unauthorized');
  assert.equal(unauthenticated.denied_response.body, 'no');
  assert.equal(decode(deny(403)).status.code, 7);
});

const logger = recordingLogger();
let authorize: Authorizer = () => allow;
let server: grpc.Server;
let client: grpc.Client;

before(async () => {
  server = new grpc.Server();
  registerAuthorizationService(server, (request) => authorize(request), logger, TEST_GRPC_CREDENTIAL);
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

function call(bytes: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      CHECK_METHOD_PATH,
      (value: Uint8Array) => Buffer.from(value),
      (value: Buffer) => value,
      bytes,
      (err, response) => (err ? reject(err) : resolve(response as Buffer)),
    );
  });
}

const failedWith =
  (code: grpc.status) =>
  (err: grpc.ServiceError): boolean =>
    err.code === code;

test('a Check answers with the decision, synchronous or not', async () => {
  authorize = () => allow;
  const sync = responseType.decode(await call(encodeRequest({ path: '/' }))) as unknown as {
    ok_response?: object;
  };
  assert.ok(sync.ok_response);
  authorize = async () => allow;
  const later = responseType.decode(await call(encodeRequest({ path: '/' }))) as unknown as {
    ok_response?: object;
  };
  assert.ok(later.ok_response);
});

test('an authorizer that throws or rejects answers INTERNAL and is logged with the request id', async () => {
  for (const failing of [
    (): never => {
      throw new Error('boom');
    },
    (): Promise<Decision> => Promise.reject(new Error('async boom')),
  ]) {
    logger.records.length = 0;
    authorize = failing;
    await assert.rejects(
      call(encodeRequest({ path: '/', headers: { 'x-request-id': 'req-9' } })),
      failedWith(grpc.status.INTERNAL),
    );
    const logged = logger.records.find((record) => record.msg === 'ext_authz: decision failed');
    assert.ok(logged, JSON.stringify(logger.records));
    assert.equal(logged.level, 'error');
    assert.equal((logged.obj as { request_id: string }).request_id, 'req-9');
  }
  authorize = () => allow;
  assert.ok(await call(encodeRequest({ path: '/' })), 'the next Check is answered as usual');
});

test('bytes that are not a CheckRequest answer INVALID_ARGUMENT and are logged', async () => {
  logger.records.length = 0;
  await assert.rejects(call(Buffer.from([0xff, 0xff, 0xff, 0xff])), failedWith(grpc.status.INVALID_ARGUMENT));
  assert.ok(logger.records.some((record) => record.msg === 'ext_authz: undecodable CheckRequest'));
});

test("an allow with a signed-in user carries the user's id and email as ext_authz dynamic metadata", () => {
  const encode = (
    decision: Decision,
  ): Record<string, any> => // eslint-disable-line @typescript-eslint/no-explicit-any
    responseType.toObject(responseType.decode(codec.encodeResponse(decision)), { enums: String });
  const base = { kind: 'allow', setHeaders: [], removeHeaders: [], reasons: ['allowed'] } as const;
  const withUser = encode({ ...base, user: { id: 'user-ada', email: 'ada@example.com' } });
  assert.deepEqual(withUser.dynamic_metadata, {
    fields: { user: { stringValue: 'user-ada' }, email: { stringValue: 'ada@example.com' } },
  });
  const noEmail = encode({ ...base, user: { id: 'user-bob', email: undefined } });
  assert.deepEqual(noEmail.dynamic_metadata, { fields: { user: { stringValue: 'user-bob' } } });
  assert.equal(encode(base).dynamic_metadata, undefined, 'no session, no user');
});
