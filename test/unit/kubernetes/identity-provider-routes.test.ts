// Several identity providers in Kubernetes: the settings object's `identityProviders` and an
// Ingress's `portcullis.dev/identity_provider` annotation together give routes that sign in at
// the named provider; a name the settings do not define is a problem of that Ingress's annotation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { parseConfig } from '../../../src/config/parse-config.js';
import {
  desiredConfig,
  type ClusterState,
  type SecretObject,
} from '../../../src/kubernetes/cluster-state.js';
import { attributeProblem } from '../../../src/kubernetes/route-provenance.js';
import { refuseFileRead } from '../../../src/kubernetes/settings-document.js';
import { input, ingress, path } from './fixtures.js';

const CORP_SECRET = `corp-${randomBytes(8).toString('hex')}`;

const secret = (data: Record<string, string>): SecretObject => ({
  data: Object.fromEntries(
    Object.entries(data).map(([key, text]) => [key, Buffer.from(text).toString('base64')]),
  ),
});

const SETTINGS = {
  metadata: { name: 'global', generation: 1 },
  spec: {
    insecureServer: true,
    authenticate: { url: 'https://auth.example.com' },
    identityProvider: { url: 'https://idp.example.com', secret: { name: 'idp' } },
    identityProviders: {
      corp: { provider: 'okta', url: 'https://corp.okta.example.com', secret: { name: 'corp' } },
    },
  },
};

function state(annotations: Record<string, string>): ClusterState {
  const { secrets: _reader, ...routes } = input({
    ingresses: [ingress('app', [path('/', 'Prefix')], { annotations })],
  });
  return {
    settings: SETTINGS,
    secrets: new Map([
      ['ns/idp', secret({ client_id: 'global', client_secret: 'global-secret' })],
      ['ns/corp', secret({ client_id: 'corp', client_secret: CORP_SECRET })],
    ]),
    namespace: 'ns',
    routes,
  };
}

test('an Ingress chooses a named provider with portcullis.dev/identity_provider', () => {
  const desired = desiredConfig(state({ 'portcullis.dev/identity_provider': 'corp' }));
  assert.deepEqual(desired.problems, []);
  assert.deepEqual(desired.routeProblems, []);
  assert.ok(desired.document);
  const parsed = parseConfig({ document: desired.document, env: {}, readText: refuseFileRead });
  assert.deepEqual(parsed.problems, []);
  const routes = parsed.config?.routes ?? [];
  assert.ok(routes.length > 0);
  for (const route of routes) assert.equal(route.identity_provider, 'corp');
  assert.equal(parsed.config?.identity_providers?.corp?.client_secret.reveal(), CORP_SECRET);
});

test('a provider name the settings do not define is a problem of the annotation', () => {
  const desired = desiredConfig(state({ 'portcullis.dev/identity_provider': 'corpp' }));
  assert.ok(desired.document && desired.origins);
  const parsed = parseConfig({ document: desired.document, env: {}, readText: refuseFileRead });
  const origins = desired.origins;
  const attributed = parsed.problems.map((problem) => attributeProblem(problem, origins));
  assert.ok(attributed.length > 0);
  for (const problem of attributed) {
    assert.equal(problem?.object.name, 'app');
    assert.match(problem?.where ?? '', /portcullis\.dev\/identity_provider/);
    assert.match(
      problem?.message ?? '',
      /"corpp" is not a defined identity provider \(did you mean corp\?\)/,
    );
  }
});
