// The policy language, table-driven: every criterion, matcher and operator, how operators and
// rules combine, deny over allow, and no-session versus wrong-user outcomes. Policies are written
// as in a config file and parsed by the config stage, so the YAML shape is what is tested.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/config/parse-policy.js';
import { Reader } from '../../../src/config/value-readers.js';
import { compilePolicy, type PolicyOutcome } from '../../../src/authorize/policy/compile-policy.js';
import type { Session } from '../../../src/session/session.js';
import type { AuthorizeRequest } from '../../../src/authorize/decision.js';

const ada: Session = {
  id: 's1',
  userId: 'user-ada',
  email: 'ada@example.com',
  emailVerified: true,
  name: 'Ada',
  groups: ['admins', 'eng'],
  claims: {
    groups: ['admins', 'eng'],
    email_verified: true,
    level: 3,
    realm_access: { roles: ['reader', 'writer'] },
    department: 'research',
    single: ['only'],
  },
  issuedAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
  idpId: 'idp-test',
};
const bob: Session = {
  ...ada,
  id: 's2',
  userId: 'user-bob',
  email: 'bob@other.org',
  groups: [],
  claims: { groups: [] },
};

const get: AuthorizeRequest = {
  routeId: '0123456789abcdef',
  requestId: 'r1',
  method: 'GET',
  scheme: 'https',
  host: 'app.example.com',
  path: '/docs/a%20b',
  query: '',
  headers: {},
  sourceIp: '10.1.2.3',
};

type Expect = 'allow' | 'deny' | 'login' | 'none';

interface Case {
  readonly name: string;
  readonly policy: unknown;
  readonly session?: Session | undefined;
  readonly request?: Partial<AuthorizeRequest>;
  readonly expect: Expect;
}

function outcomeOf(policy: unknown, session: Session | undefined, request: AuthorizeRequest): PolicyOutcome {
  const reader = new Reader();
  const rules = parsePolicy(reader, 'policy', policy);
  assert.deepEqual(reader.problems, [], 'test policy must be valid');
  assert.ok(rules);
  return compilePolicy(rules)({ session, request });
}

/** The decision order of the peer: sign-in first, then deny, then allow, else nothing allows. */
function verdict(outcome: PolicyOutcome): Expect {
  if (outcome.unauthenticated) return 'login';
  if (outcome.deny) return 'deny';
  if (outcome.allow) return 'allow';
  return 'none';
}

const cases: Case[] = [
  // accept / reject / authenticated_user
  {
    name: 'accept allows anyone',
    policy: { allow: { or: [{ accept: true }] } },
    session: undefined,
    expect: 'allow',
  },
  {
    name: 'reject allows nobody',
    policy: { allow: { or: [{ reject: true }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'authenticated_user with a session',
    policy: { allow: { or: [{ authenticated_user: true }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'authenticated_user without a session asks to sign in',
    policy: { allow: { or: [{ authenticated_user: true }] } },
    expect: 'login',
  },
  { name: 'no rules allow nobody, without a sign-in prompt', policy: [], expect: 'none' },
  // email
  {
    name: 'email is: match',
    policy: { allow: { and: [{ email: { is: 'ada@example.com' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email bare value means is',
    policy: { allow: { and: [{ email: 'ada@example.com' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email is: wrong user',
    policy: { allow: { and: [{ email: { is: 'ada@example.com' } }] } },
    session: bob,
    expect: 'none',
  },
  {
    name: 'email compares canonical addresses: any case matches (issue 33 item 6)',
    policy: { allow: { and: [{ email: { is: 'ADA@example.com' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email without a session asks to sign in',
    policy: { allow: { and: [{ email: { is: 'ada@example.com' } }] } },
    expect: 'login',
  },
  {
    name: 'email not',
    policy: { allow: { and: [{ email: { not: 'bob@other.org' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email not: excluded user',
    policy: { allow: { and: [{ email: { not: 'bob@other.org' } }] } },
    session: bob,
    expect: 'none',
  },
  {
    name: 'email contains',
    policy: { allow: { and: [{ email: { contains: '@example' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email starts_with',
    policy: { allow: { and: [{ email: { starts_with: 'ada@' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email ends_with: no',
    policy: { allow: { and: [{ email: { ends_with: '.org' } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'email in',
    policy: { allow: { and: [{ email: { in: ['x@y.z', 'ada@example.com'] } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'email not_in',
    policy: { allow: { and: [{ email: { not_in: ['ada@example.com'] } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'several string operators are AND-ed',
    policy: { allow: { and: [{ email: { starts_with: 'ada', ends_with: '.org' } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'several string operators all true',
    policy: { allow: { and: [{ email: { starts_with: 'ada', ends_with: '.com' } }] } },
    session: ada,
    expect: 'allow',
  },
  // domain / user
  {
    name: 'domain is',
    policy: { allow: { or: [{ domain: { is: 'example.com' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'domain is: other domain',
    policy: { allow: { or: [{ domain: { is: 'example.com' } }] } },
    session: bob,
    expect: 'none',
  },
  {
    name: 'domain is not a suffix match',
    policy: { allow: { or: [{ domain: { is: 'ample.com' } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'domain without a session',
    policy: { allow: { or: [{ domain: { is: 'example.com' } }] } },
    expect: 'login',
  },
  {
    name: 'user is',
    policy: { allow: { or: [{ user: { is: 'user-ada' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'user is: other user',
    policy: { allow: { or: [{ user: { is: 'user-ada' } }] } },
    session: bob,
    expect: 'none',
  },
  {
    name: 'user in',
    policy: { allow: { or: [{ user: { in: ['user-bob', 'user-ada'] } }] } },
    session: bob,
    expect: 'allow',
  },
  // claims
  {
    name: 'claim has (bare value)',
    policy: { allow: { or: [{ 'claim/groups': 'admins' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'claim has: missing group',
    policy: { allow: { or: [{ 'claim/groups': 'admins' }] } },
    session: bob,
    expect: 'none',
  },
  {
    name: 'claim has with a string matcher',
    policy: { allow: { or: [{ 'claim/groups': { has: { starts_with: 'adm' } } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'claim is: needs exactly one element',
    policy: { allow: { or: [{ 'claim/groups': { is: 'admins' } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'claim is: one element matching',
    policy: { allow: { or: [{ 'claim/single': { is: 'only' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'claim exclude: none match',
    policy: { allow: { or: [{ 'claim/groups': { exclude: 'contractors' } }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'claim exclude: one matches',
    policy: { allow: { or: [{ 'claim/groups': { exclude: 'eng' } }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'nested claim by path',
    policy: { allow: { or: [{ 'claim/realm_access.roles': 'writer' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'nested claim by path: absent role',
    policy: { allow: { or: [{ 'claim/realm_access.roles': 'owner' }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'boolean claim',
    policy: { allow: { or: [{ 'claim/email_verified': true }] } },
    session: ada,
    expect: 'allow',
  },
  { name: 'number claim', policy: { allow: { or: [{ 'claim/level': 3 }] } }, session: ada, expect: 'allow' },
  {
    name: 'scalar string claim',
    policy: { allow: { or: [{ 'claim/department': 'research' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'missing claim',
    policy: { allow: { or: [{ 'claim/nothing': 'x' }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'claim without a session',
    policy: { allow: { or: [{ 'claim/groups': 'admins' }] } },
    expect: 'login',
  },
  // request criteria
  {
    name: 'http_method is',
    policy: { allow: { and: [{ http_method: 'GET' }] } },
    request: { method: 'GET' },
    expect: 'allow',
  },
  {
    name: 'http_method is: other method',
    policy: { allow: { and: [{ http_method: 'GET' }] } },
    request: { method: 'POST' },
    expect: 'none',
  },
  {
    name: 'http_method in',
    policy: { allow: { and: [{ http_method: { in: ['GET', 'HEAD'] } }] } },
    request: { method: 'HEAD' },
    expect: 'allow',
  },
  {
    name: 'http_path starts_with',
    policy: { allow: { and: [{ http_path: { starts_with: '/docs/' } }] } },
    expect: 'allow',
  },
  {
    name: 'http_path is URL-decoded',
    policy: { allow: { and: [{ http_path: { is: '/docs/a b' } }] } },
    expect: 'allow',
  },
  {
    name: 'http_path other path',
    policy: { allow: { and: [{ http_path: { starts_with: '/admin' } }] } },
    expect: 'none',
  },
  { name: 'source_ip in CIDR', policy: { allow: { or: [{ source_ip: '10.0.0.0/8' }] } }, expect: 'allow' },
  {
    name: 'source_ip outside CIDR',
    policy: { allow: { or: [{ source_ip: '192.168.0.0/16' }] } },
    expect: 'none',
  },
  {
    name: 'source_ip list and exact address',
    policy: { allow: { or: [{ source_ip: ['192.168.0.0/16', '10.1.2.3'] }] } },
    expect: 'allow',
  },
  {
    name: 'source_ip IPv6',
    policy: { allow: { or: [{ source_ip: 'fd00::/8' }] } },
    request: { sourceIp: 'fd00::1' },
    expect: 'allow',
  },
  {
    name: 'cors_preflight: a preflight',
    policy: { allow: { or: [{ cors_preflight: true }] } },
    request: { method: 'OPTIONS', headers: { origin: 'https://x', 'access-control-request-method': 'POST' } },
    expect: 'allow',
  },
  {
    name: 'cors_preflight: plain OPTIONS is not',
    policy: { allow: { or: [{ cors_preflight: true }] } },
    request: { method: 'OPTIONS' },
    expect: 'none',
  },
  // operators
  {
    name: 'and: all true',
    policy: { allow: { and: [{ email: 'ada@example.com' }, { http_method: 'GET' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'and: one false',
    policy: { allow: { and: [{ email: 'ada@example.com' }, { http_method: 'POST' }] } },
    session: ada,
    expect: 'none',
  },
  {
    name: 'or: one true',
    policy: { allow: { or: [{ email: 'x@y.z' }, { http_method: 'GET' }] } },
    session: ada,
    expect: 'allow',
  },
  {
    name: 'not: all false',
    policy: { allow: { not: [{ http_method: 'POST' }, { http_method: 'PUT' }] } },
    expect: 'allow',
  },
  {
    name: 'not: one true',
    policy: { allow: { not: [{ http_method: 'GET' }, { http_method: 'PUT' }] } },
    expect: 'none',
  },
  {
    name: 'nor: at least one false (NAND)',
    policy: { allow: { nor: [{ http_method: 'GET' }, { http_method: 'PUT' }] } },
    expect: 'allow',
  },
  {
    name: 'nor: all true',
    policy: { allow: { nor: [{ http_method: 'GET' }, { http_path: { starts_with: '/docs' } }] } },
    expect: 'none',
  },
  {
    name: 'blocks of one rule are OR-ed: (A and B) or C',
    policy: { allow: { and: [{ reject: true }], or: [{ http_method: 'GET' }] } },
    expect: 'allow',
  },
  {
    name: 'rules with the same action are OR-ed',
    policy: [{ allow: { and: [{ reject: true }] } }, { allow: { and: [{ accept: true }] } }],
    expect: 'allow',
  },
  {
    name: 'an empty operator list contributes nothing',
    policy: { allow: { and: [], or: [{ accept: true }] } },
    expect: 'allow',
  },
  // deny over allow
  {
    name: 'deny beats allow',
    policy: [{ allow: { or: [{ accept: true }] } }, { deny: { or: [{ http_method: 'GET' }] } }],
    expect: 'deny',
  },
  {
    name: 'deny not matching leaves allow',
    policy: [{ allow: { or: [{ accept: true }] } }, { deny: { or: [{ http_method: 'DELETE' }] } }],
    expect: 'allow',
  },
  {
    name: 'deny by user',
    policy: [
      { allow: { or: [{ authenticated_user: true }] } },
      { deny: { or: [{ email: 'bob@other.org' }] } },
    ],
    session: bob,
    expect: 'deny',
  },
  {
    name: 'deny by user: other user allowed',
    policy: [
      { allow: { or: [{ authenticated_user: true }] } },
      { deny: { or: [{ email: 'bob@other.org' }] } },
    ],
    session: ada,
    expect: 'allow',
  },
  {
    name: 'a deny needing a session asks to sign in first',
    policy: [{ allow: { or: [{ accept: true }] } }, { deny: { or: [{ email: 'bob@other.org' }] } }],
    expect: 'login',
  },
  {
    name: 'accept in the same block hides the sign-in reason',
    policy: { allow: { or: [{ accept: true }, { authenticated_user: true }] } },
    expect: 'allow',
  },
  {
    name: 'deny with not',
    policy: [
      { allow: { or: [{ authenticated_user: true }] } },
      { deny: { not: [{ 'claim/groups': 'admins' }] } },
    ],
    session: bob,
    expect: 'deny',
  },
  {
    name: 'deny with not: member passes',
    policy: [
      { allow: { or: [{ authenticated_user: true }] } },
      { deny: { not: [{ 'claim/groups': 'admins' }] } },
    ],
    session: ada,
    expect: 'allow',
  },
];

for (const entry of cases) {
  test(`policy: ${entry.name}`, () => {
    const outcome = outcomeOf(entry.policy, entry.session, {
      ...get,
      ...entry.request,
      headers: { ...get.headers, ...entry.request?.headers },
    });
    assert.equal(
      verdict(outcome),
      entry.expect,
      `reasons: allow=${outcome.allowReasons.join(',')} deny=${outcome.denyReasons.join(',')}`,
    );
  });
}

test('there are at least 60 policy cases', () => {
  assert.ok(cases.length >= 60, `${cases.length} cases`);
});

test('decisions carry their reasons', () => {
  const denied = outcomeOf({ allow: { and: [{ email: 'ada@example.com' }] } }, bob, get);
  assert.deepEqual(denied.allowReasons, ['email-unauthorized']);
  const allowed = outcomeOf(
    { allow: { and: [{ email: 'ada@example.com' }, { http_method: 'GET' }] } },
    ada,
    get,
  );
  assert.deepEqual(allowed.allowReasons, ['email-ok', 'http-method-ok']);
  const anonymous = outcomeOf({ allow: { or: [{ domain: 'example.com' }] } }, undefined, get);
  assert.deepEqual(anonymous.allowReasons, ['user-unauthenticated']);
});

test('unsupported criteria fail closed', () => {
  const outcome = outcomeOf({ allow: { or: [{ invalid_client_certificate: true }] } }, ada, get);
  assert.equal(outcome.allow, false);
});
