// The Check codec's allow (authorize/ext-authz/check-codec.ts): headers to the upstream overwrite,
// response headers to the client (the decision-token Set-Cookie) go in
// `ok_response.response_headers_to_add`, appended so the upstream's own Set-Cookie stays.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createCheckCodec } from '../../../../src/authorize/ext-authz/check-codec.js';
import { messageType } from '../../../../src/proto/proto-root.js';

const responseType = messageType('envoy.service.auth.v3.CheckResponse');

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded protobufjs objects are untyped trees
function decoded(bytes: Uint8Array): Record<string, any> {
  return responseType.toObject(responseType.decode(bytes), { enums: String, defaults: true });
}

test('response headers of an allow are encoded as response_headers_to_add, APPEND_IF_EXISTS_OR_ADD', () => {
  const codec = createCheckCodec();
  const setCookie = '_portcullis_dt=abc.def.ghi; Max-Age=120; Path=/; HttpOnly; Secure; SameSite=Lax';
  const response = decoded(
    codec.encodeResponse({
      kind: 'allow',
      setHeaders: [['x-portcullis-jwt-assertion', 'a.b.c']],
      removeHeaders: ['cookie'],
      responseHeaders: [['set-cookie', setCookie]],
      reasons: [],
    }),
  );
  const ok = response.ok_response;
  assert.equal(ok.response_headers_to_add.length, 1);
  assert.deepEqual(ok.response_headers_to_add[0].header, {
    key: 'set-cookie',
    value: setCookie,
    raw_value: Buffer.alloc(0),
  });
  assert.equal(ok.response_headers_to_add[0].append_action, 'APPEND_IF_EXISTS_OR_ADD');
  assert.equal(ok.response_headers_to_add[0].append, null, 'not the deprecated append flag');
  assert.equal(ok.headers[0].append_action, 'OVERWRITE_IF_EXISTS_OR_ADD', 'upstream headers still overwrite');
  assert.deepEqual(ok.headers_to_remove, ['cookie']);
});

test('an allow without response headers adds none', () => {
  const codec = createCheckCodec();
  const response = decoded(
    codec.encodeResponse({ kind: 'allow', setHeaders: [], removeHeaders: [], reasons: [] }),
  );
  assert.deepEqual(response.ok_response.response_headers_to_add, []);
});
