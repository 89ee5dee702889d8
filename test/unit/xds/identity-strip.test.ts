// The strip scripts carry configured names as Lua string literals that no name can break out of.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  credentialStripScript,
  identityPassMetadata,
  identityStripScript,
  luaString,
} from '../../../src/xds/compile/identity-strip.js';

test('luaString escapes every byte outside [A-Za-z0-9_.-] as a three-digit decimal escape', () => {
  assert.equal(luaString('_portcullis'), '"_portcullis"');
  assert.equal(luaString('a"b\\c\n1'), '"a\\034b\\092c\\0101"');
  assert.equal(luaString('é'), '"\\195\\169"');
});

test('the configured names reach the scripts only as literals', () => {
  const script = credentialStripScript('x"; os.exit() --');
  assert.match(script, /^local COOKIE = "x\\034\\059\\032os.exit\\040\\041\\032--"$/m);
  assert.doesNotMatch(script, /os\.exit\(\)/);
  assert.match(
    identityStripScript(['X-Dept', 'x-dept', 'X-Email']),
    /^local NAMES = \{\["x-dept"\] = true, \["x-email"\] = true\}$/m,
  );
});

test('the identity strip carries the shared identity list; a route passes names only through its metadata', () => {
  const script = identityStripScript([]);
  assert.match(script, /\["x-forwarded-user"\] = true/);
  assert.match(
    script,
    /^local IDENTITY_PREFIXES = \{"impersonate-", "x-auth-request-", "x-remote-extra-"\}$/m,
  );
  assert.equal(identityPassMetadata([]), undefined);
  assert.deepEqual(identityPassMetadata(['x-forwarded-user', 'impersonate-user']), {
    filter_metadata: {
      'portcullis.strip_identity_headers': {
        fields: {
          pass: {
            listValue: { values: [{ stringValue: 'impersonate-user' }, { stringValue: 'x-forwarded-user' }] },
          },
        },
      },
    },
  });
});
