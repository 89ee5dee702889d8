import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactor } from '../../../src/shared/redact.js';
import { LOG_SECRET_NAMES } from '../../../src/contract/log-secrets.js';

const redact = redactor(LOG_SECRET_NAMES);

test('header values are masked in the forms Envoy, JSON, proto text and grpc-js print them', () => {
  const cases: [string, string][] = [
    [
      "headers:\\n':authority', 'app.test'\\n'cookie', '_portcullis=H1; f=F1'\\n'authorization', 'Bearer T1'\\n",
      "headers:\\n':authority', 'app.test'\\n'cookie', '[redacted]'\\n'authorization', '[redacted]'\\n",
    ],
    ['{"authorization":"Bearer T1","x":"y"}', '{"authorization":"[redacted]","x":"y"}'],
    ['key: "set-cookie"\n value: "_portcullis=H1"', 'key: "set-cookie"\n value: "[redacted]"'],
    ['Set-Cookie: _portcullis=H1; Path=/\nnext: 1', 'Set-Cookie: [redacted]\nnext: 1'],
    [
      "Failed to add metadata entry authorization: Bearer T1'\u0001x. see https://x",
      'Failed to add metadata entry authorization: [redacted]',
    ],
    ["'x-portcullis-session-handle', 'H1'", "'x-portcullis-session-handle', '[redacted]'"],
  ];
  for (const [input, output] of cases) assert.equal(redact(input), output);
});

test('credential query values are masked, also percent-encoded inside another parameter', () => {
  assert.equal(
    redact("':path', '/oauth2/callback?code=C1&state=S1&iss=x'"),
    "':path', '/oauth2/callback?code=[redacted]&state=[redacted]&iss=x'",
  );
  assert.equal(
    redact('/.portcullis/callback?portcullis_handoff=H1 /x?portcullis_jwt=J1#f'),
    '/.portcullis/callback?portcullis_handoff=[redacted] /x?portcullis_jwt=[redacted]#f',
  );
  assert.equal(
    redact('/sign_in?portcullis_redirect_uri=https%3A%2F%2Fa%2F%3Fcode%3DC1%26state%3DS1'),
    '/sign_in?portcullis_redirect_uri=https%3A%2F%2Fa%2F%3Fcode%3D[redacted]%26state%3D[redacted]',
  );
  assert.equal(redact('server state=LIVE, code=3'), 'server state=LIVE, code=3', 'only query parameters');
});

test("Envoy's escaped header dumps (--log-format-escaped writes \\') are masked too", () => {
  assert.equal(
    redact("\\'set-cookie\\', \\'_portcullis_flow_1=F1; Path=/\\'\\n\\'location\\', \\'/x?state=S1\\'"),
    "\\'set-cookie\\', \\'[redacted]\\'\\n\\'location\\', \\'/x?state=[redacted]\\'",
  );
});

test("the decision token's assertion claim is masked where Envoy dumps jwt_authn's payload", () => {
  // As RBAC's debug "checking request" line prints dynamic metadata under --log-format-escaped.
  const escaped =
    'fields {\\n            key: \\"ja\\"\\n            value {\\n              string_value: \\"eyJ.A1.S1\\"\\n            }\\n          }\\n          fields {\\n            key: \\"sid\\"\\n            value {\\n              string_value: \\"s1\\"';
  const masked = redact(escaped);
  assert.ok(!masked.includes('eyJ.A1.S1'), masked);
  assert.match(masked, /string_value: \\"\[redacted\]\\"/);
  assert.ok(masked.includes('string_value: \\"s1\\"'), 'other fields stay');
  assert.equal(
    redact('key: "ja"\n  value {\n    string_value: "eyJ.A1.S1"\n  }'),
    'key: "ja"\n  value {\n    string_value: "[redacted]"\n  }',
  );
});
