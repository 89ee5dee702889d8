// Option keys in messages and descriptions become field names; ordinary words and keys with no
// field stay as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameOptionKeys } from '../../../src/kubernetes/field-names.js';

test('option keys become fields, longest key first, whole words only', () => {
  assert.equal(
    renameOptionKeys('set idp_provider_url (or idp_provider) and cookie_expire', 'spec.'),
    'set spec.identityProvider.url (or spec.identityProvider.provider) and spec.cookie.expire',
  );
  assert.equal(
    renameOptionKeys('shared_secret is required', 'spec.'),
    'spec.secrets (key shared_secret) is required',
  );
  assert.equal(renameOptionKeys('the jwt_claims_header alias', ''), 'the jwtClaimHeaders alias');
});

test('single words, keys without a field, and longer names are left alone', () => {
  const text = 'is not an address; see routes, cookie_secret_file, my_idp_provider and idp_provider_x';
  assert.equal(renameOptionKeys(text, 'spec.'), text);
});
