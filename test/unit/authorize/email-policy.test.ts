// Issue 33 items 6 and 7: addresses are parsed strictly and compared in one canonical form (any
// case, allow and deny alike; two @ is no address), config values are validated and stored that
// way, and an address the provider did not verify counts as none for every address criterion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalDomain, canonicalEmail, canonicalUserId } from '../../../src/shared/email-address.js';
import { parsePolicy } from '../../../src/config/parse-policy.js';
import { Reader } from '../../../src/config/value-readers.js';
import { compilePolicy, type PolicyOutcome } from '../../../src/authorize/policy/compile-policy.js';
import { assembleRoutePolicy } from '../../../src/translate/route-policy.js';
import { decodeSession } from '../../../src/databroker/session-codec.js';
import { emailVerifiedBy } from '../../../src/authenticate/providers/email-verified.js';
import { refreshedSession } from '../../../src/authenticate/refresh/refreshed-session.js';
import type { Session } from '../../../src/session/session.js';
import type { AuthorizeRequest } from '../../../src/authorize/decision.js';
import type { RouteSettings } from '../../../src/config/types.js';
import { base, parse } from '../config/helpers.js';
import { identityProviderId } from '../../../src/config/identity-provider.js';

test('canonicalEmail: one @, a dot-atom local part, a DNS domain; the whole address lower-cased', () => {
  const good: [string, string][] = [
    ['Eve@Example.TEST', 'eve@example.test'],
    ['a.b+tag@sub.example.test', 'a.b+tag@sub.example.test'],
    ['eve@example.test.', 'eve@example.test'],
    ['ÉVE@example.test', 'éve@example.test'],
    ['eve@Exämple.test', 'eve@xn--exmple-cua.test'],
    ['eve@localhost', 'eve@localhost'],
  ];
  for (const [input, canonical] of good) assert.equal(canonicalEmail(input), canonical, input);
  const bad = [
    'a@evil.test@example.test',
    '"a@evil.test"@example.test',
    '@example.test',
    'eve@',
    'eve',
    'eve @example.test',
    ' eve@example.test',
    'a..b@example.test',
    '.a@example.test',
    'a.@example.test',
    '"a b"@example.test',
    'eve@127.0.0.1',
    'eve@[127.0.0.1]',
    'eve@[::1]',
    'eve@*.example.test',
    'eve@exa_mple.test',
    'eve@example.test:443',
    'eve\u0000@example.test',
    `${'a'.repeat(65)}@example.test`,
    '',
  ];
  for (const input of bad) assert.equal(canonicalEmail(input), undefined, JSON.stringify(input));
  assert.equal(canonicalEmail(undefined), undefined);
});

test('canonicalDomain and canonicalUserId', () => {
  assert.equal(canonicalDomain('Example.TEST'), 'example.test');
  assert.equal(canonicalDomain('example.test.'), 'example.test');
  for (const bad of [
    '',
    'a@example.test',
    '*.example.test',
    '10.0.0.1',
    '[::1]',
    'exa mple.test',
    'https://x.test',
  ])
    assert.equal(canonicalDomain(bad), undefined, bad);
  assert.equal(canonicalUserId('Eve@Example.test'), 'eve@example.test');
  assert.equal(canonicalUserId('AbC-123'), 'AbC-123');
  assert.equal(canonicalUserId('a@b@c'), 'a@b@c');
});

const eve: Session = {
  id: 's-eve',
  userId: 'sub-eve',
  email: 'Eve@example.test',
  emailVerified: true,
  name: 'Eve',
  groups: [],
  claims: {},
  issuedAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  idpId: 'idp',
};

const get: AuthorizeRequest = {
  routeId: '0123456789abcdef',
  requestId: 'r1',
  method: 'GET',
  scheme: 'https',
  host: 'app.example.test',
  path: '/',
  query: '',
  headers: {},
  sourceIp: '10.1.2.3',
};

function outcome(policy: unknown, session: Session | undefined): PolicyOutcome {
  const reader = new Reader();
  const rules = parsePolicy(reader, 'policy', policy);
  assert.deepEqual(reader.problems, []);
  return compilePolicy(rules ?? [])({ request: get, session });
}

type Verdict = 'allow' | 'deny' | 'login' | 'none';
function verdict(result: PolicyOutcome): Verdict {
  if (result.unauthenticated) return 'login';
  if (result.deny) return 'deny';
  return result.allow ? 'allow' : 'none';
}

const open = { allow: { or: [{ domain: 'example.test' }] } };

test('a deny on an address catches it in any case, and on the domain too', () => {
  const cases: [unknown, Verdict][] = [
    [[open, { deny: { or: [{ email: 'eve@example.test' }] } }], 'deny'],
    [[open, { deny: { or: [{ email: 'EVE@EXAMPLE.TEST' }] } }], 'deny'],
    [[open, { deny: { or: [{ email: { in: ['x@y.test', 'eVe@example.test'] } }] } }], 'deny'],
    [[open, { deny: { or: [{ email: { ends_with: '@Example.Test' } }] } }], 'deny'],
    [[open, { deny: { or: [{ email: { starts_with: 'EVE@' } }] } }], 'deny'],
    [[open, { deny: { or: [{ domain: 'EXAMPLE.test' }] } }], 'deny'],
    [[open, { deny: { or: [{ email: { not: 'EVE@example.test' } }] } }], 'allow'],
    [[open, { deny: { or: [{ email: 'mallory@example.test' }] } }], 'allow'],
    [{ allow: { or: [{ email: 'eve@EXAMPLE.test' }] } }, 'allow'],
    [{ allow: { or: [{ domain: 'Example.Test' }] } }, 'allow'],
  ];
  for (const [policy, expected] of cases)
    assert.equal(verdict(outcome(policy, eve)), expected, JSON.stringify(policy));
});

test('an address with two @ (or otherwise unparsable) is no address: no domain, no e-mail', () => {
  for (const email of ['a@evil.test@example.test', 'eve@example.test ', 'eve@10.0.0.1', 'eve']) {
    const session = { ...eve, email };
    assert.equal(verdict(outcome(open, session)), 'none', email);
    assert.equal(
      verdict(outcome({ allow: { or: [{ email: { ends_with: 'example.test' } }] } }, session)),
      'none',
    );
    // A rule that denies everyone outside the domain denies it.
    assert.equal(verdict(outcome([open, { deny: { not: [{ domain: 'example.test' }] } }], session)), 'deny');
  }
});

test('an unverified address counts as none for every address criterion; a stored-before session signs in again', () => {
  const unverified = { ...eve, emailVerified: false };
  assert.equal(verdict(outcome(open, unverified)), 'none');
  assert.equal(verdict(outcome({ allow: { or: [{ email: 'eve@example.test' }] } }, unverified)), 'none');
  assert.equal(verdict(outcome({ allow: { or: [{ email: { not: 'x@y.test' } }] } }, unverified)), 'none');
  assert.equal(
    verdict(outcome([open, { deny: { not: [{ domain: 'example.test' }] } }], { ...unverified })),
    'deny',
  );
  // The user id still counts: an address is not an identity.
  assert.equal(verdict(outcome({ allow: { or: [{ user: 'sub-eve' }] } }, unverified)), 'allow');
  const legacy = { ...eve, emailVerified: undefined };
  assert.equal(verdict(outcome(open, legacy)), 'login');
  assert.equal(verdict(outcome({ allow: { or: [{ user: 'sub-eve' }] } }, legacy)), 'allow');
});

test('user: ids that are addresses compare canonically, opaque ids exactly, fragments as sent', () => {
  const byAddress = { ...eve, userId: 'Eve@Example.test' };
  assert.equal(verdict(outcome({ allow: { or: [{ user: 'eve@example.test' }] } }, byAddress)), 'allow');
  assert.equal(
    verdict(
      outcome(
        [{ allow: { or: [{ accept: true }] } }, { deny: { or: [{ user: 'EVE@example.test' }] } }],
        byAddress,
      ),
    ),
    'deny',
  );
  assert.equal(verdict(outcome({ allow: { or: [{ user: 'SUB-EVE' }] } }, eve)), 'none');
  assert.equal(verdict(outcome({ allow: { or: [{ user: { starts_with: 'Eve@' } }] } }, byAddress)), 'allow');
  assert.equal(
    verdict(
      outcome({ allow: { and: [{ user: { starts_with: 'Eve', is: 'eve@example.test' } }] } }, byAddress),
    ),
    'allow',
  );
});

function route(extra: Partial<RouteSettings>): RouteSettings {
  return {
    source_path: 'routes[0]',
    allowed_users: [],
    allowed_domains: [],
    allowed_idp_claims: {},
    policy: [],
    allow_public_unauthenticated_access: false,
    allow_any_authenticated_user: false,
    cors_allow_preflight: false,
    ...extra,
  } as RouteSettings;
}

test('allowed_users and allowed_domains: canonical in config, matched in any case', () => {
  const config = parse(
    base({
      routes: [
        {
          from: 'https://a.example.com',
          to: 'http://10.0.0.1:8080',
          allowed_users: ['Eve@Example.TEST', 'Sub-X'],
        },
        { from: 'https://b.example.com', to: 'http://10.0.0.1:8080', allowed_domains: ['Example.TEST.'] },
        {
          from: 'https://c.example.com',
          to: 'http://10.0.0.1:8080',
          policy: {
            deny: {
              or: [{ email: { in: ['MALLORY@example.test'] } }, { domain: { ends_with: '.EVIL.test' } }],
            },
          },
          allow_any_authenticated_user: true,
        },
      ],
    }),
  );
  assert.deepEqual(config.problems, []);
  const routes = config.config?.routes ?? [];
  assert.deepEqual(routes[0]?.allowed_users, ['eve@example.test', 'Sub-X']);
  assert.deepEqual(routes[1]?.allowed_domains, ['example.test']);
  assert.deepEqual(JSON.parse(JSON.stringify(routes[2]?.policy[0]?.or)), [
    { kind: 'email', matcher: { in: ['mallory@example.test'] }, path: 'routes[2].policy.deny.or[0]' },
    { kind: 'domain', matcher: { ends_with: '.evil.test' }, path: 'routes[2].policy.deny.or[1]' },
  ]);
  const allowEve = compilePolicy(assembleRoutePolicy(route({ allowed_users: ['eve@example.test'] })));
  assert.equal(allowEve({ request: get, session: eve }).allow, true);
  assert.equal(
    allowEve({ request: get, session: { ...eve, email: 'a@evil.test@eve@example.test' } }).allow,
    false,
  );
});

test('invalid addresses and domains in config are errors naming their key', () => {
  const result = parse(
    base({
      routes: [
        {
          from: 'https://a.example.com',
          to: 'http://10.0.0.1:8080',
          allowed_users: ['ok-id', 'a@evil.test@example.test'],
          allowed_domains: ['example.test', '*.example.test', '@example.test'],
        },
        {
          from: 'https://b.example.com',
          to: 'http://10.0.0.1:8080',
          policy: [
            { allow: { or: [{ email: 'eve' }, { domain: { in: ['ok.test', '10.0.0.1'] } }] } },
            { deny: { or: [{ email: { not: 'a@b@c.test' } }] } },
          ],
        },
      ],
    }),
  );
  const paths = result.problems.map((problem) => problem.path).sort();
  assert.deepEqual(paths, [
    'routes[0].allowed_domains[1]',
    'routes[0].allowed_domains[2]',
    'routes[0].allowed_users[1]',
    'routes[1].policy[0].allow.or[0].email',
    'routes[1].policy[0].allow.or[1].domain.in[1]',
    'routes[1].policy[1].deny.or[0].email.not',
  ]);
  for (const problem of result.problems) assert.match(problem.message, /is not (an e-mail address|a domain)/);
});

test('email_verified: only true (or "true") from the provider verifies; the opt-out trusts every address', () => {
  assert.equal(emailVerifiedBy({ email_verified: true }, {}), true);
  assert.equal(emailVerifiedBy({ email_verified: 'true' }, {}), true);
  for (const claims of [{}, { email_verified: false }, { email_verified: 'false' }, { email_verified: 1 }])
    assert.equal(emailVerifiedBy(claims, {}), false, JSON.stringify(claims));
  assert.equal(emailVerifiedBy({ email_verified: false }, { trustUnverifiedEmail: true }), true);
});

test('a stored session keeps emailVerified; one stored before it was recorded reads undefined', () => {
  const stored = JSON.parse(JSON.stringify(eve)) as Record<string, unknown>;
  assert.equal(decodeSession(stored, eve.id)?.emailVerified, true);
  assert.equal(decodeSession({ ...stored, emailVerified: false }, eve.id)?.emailVerified, false);
  delete stored.emailVerified;
  assert.equal(decodeSession(stored, eve.id)?.emailVerified, undefined);
  assert.equal(decodeSession({ ...stored, emailVerified: 'yes' }, eve.id)?.emailVerified, undefined);
});

test('a refresh that brings a new unverified address does not inherit the old verdict', async () => {
  const secret = new Uint8Array(32);
  const base = { userId: 'sub-eve', accessToken: 'at', refreshToken: undefined, idToken: undefined };
  const times = { accessTokenExpiresAt: undefined, idTokenExpiresAt: undefined };
  const old = { accessToken: 'a', refreshToken: 'r', idToken: undefined };
  const moved = await refreshedSession(
    { ...eve, claims: { email: eve.email, email_verified: true } },
    old,
    { ...base, ...times, claims: { email: 'eve@other.test' }, emailVerified: false },
    secret,
  );
  assert.equal(moved.email, 'eve@other.test');
  assert.equal(moved.emailVerified, false);
  const quiet = await refreshedSession(
    eve,
    old,
    { ...base, ...times, claims: {}, emailVerified: false },
    secret,
  );
  assert.equal(quiet.emailVerified, true);
});

test('idp_trust_unverified_email is part of the client id only when on: turning it on or off makes sessions foreign', () => {
  const settings = (trust: boolean) => ({
    provider: 'oidc' as const,
    providerUrl: new URL('https://idp.example.com'),
    clientId: 'c',
    scopes: undefined,
    requestParams: {},
    trustUnverifiedEmail: trust,
  });
  const { trustUnverifiedEmail: _ignored, ...before } = settings(false);
  assert.equal(
    identityProviderId(settings(false)),
    identityProviderId(before as Parameters<typeof identityProviderId>[0]),
  );
  assert.notEqual(identityProviderId(settings(true)), identityProviderId(settings(false)));
});
