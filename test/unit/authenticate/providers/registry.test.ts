// ProviderRegistry keeps a client (and with it its discovery and JWKS caches) across reloads when
// its ProviderConfig is unchanged, rebuilds a changed one and drops a removed one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProviderRegistry } from '../../../../src/authenticate/providers/registry.js';
import type { ProviderConfig } from '../../../../src/authenticate/types.js';

function config(id: string, overrides: Partial<ProviderConfig> = {}): ProviderConfig {
  return {
    id,
    provider: 'oidc',
    providerUrl: new URL('https://idp.example.com'),
    clientId: 'cid',
    clientSecret: 'secret',
    scopes: undefined,
    requestParams: {},
    ...overrides,
  };
}

test('a reload keeps unchanged clients, rebuilds changed ones and drops removed ones', () => {
  const registry = new ProviderRegistry();
  registry.update(
    new Map([
      ['a', config('a')],
      ['b', config('b')],
    ]),
  );
  const a = registry.get('a');
  const b = registry.get('b');
  assert.ok(a !== undefined && b !== undefined);
  registry.update(
    new Map([
      ['a', config('a', { providerUrl: new URL('https://idp.example.com') })],
      ['b', config('b', { clientSecret: 'rotated' })],
    ]),
  );
  assert.equal(registry.get('a'), a, 'same settings: same client');
  assert.notEqual(registry.get('b'), b, 'a new secret: a new client');
  assert.equal(registry.get('b')?.config.clientSecret, 'rotated');
  registry.update(new Map([['b', config('b', { clientSecret: 'rotated' })]]));
  assert.equal(registry.get('a'), undefined);
});

test('a config that cannot be built leaves the previous set in place', () => {
  const registry = new ProviderRegistry();
  registry.update(new Map([['a', config('a')]]));
  const a = registry.get('a');
  assert.throws(
    () => registry.update(new Map([['x', config('x', { providerUrl: undefined })]])),
    /idp_provider_url/,
  );
  assert.equal(registry.get('a'), a);
});
