// The route policy language: parsed into typed rules, and every mistake reported at its path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../../src/config/parse-policy.js';
import { Reader } from '../../../src/config/value-readers.js';
import { formatProblem } from '../../../src/shared/errors.js';
import { assertProblem, base, problems, valid } from './helpers.js';

function policyProblems(policy: unknown): string[] {
  const reader = new Reader();
  assert.equal(parsePolicy(reader, 'routes[3].policy', policy), undefined, 'expected problems');
  return reader.problems.map(formatProblem);
}

test('a full policy parses into typed rules', () => {
  const config = valid(
    base({
      routes: [
        {
          from: 'https://app.example.com',
          to: 'http://a:80',
          policy: [
            {
              allow: {
                and: [{ domain: 'example.com' }, { 'claim/groups': { has: { starts_with: 'eng-' } } }],
                or: [{ email: { in: ['a@example.com', 'b@example.com'] } }, { accept: true }],
              },
            },
            {
              deny: {
                or: [{ http_path: { starts_with: '/admin' } }, { source_ip: ['10.0.0.0/8', '2001:db8::1'] }],
                nor: [{ 'claim/email_verified': true }],
              },
            },
            { allow: { not: [{ http_method: { not_in: ['GET', 'HEAD'] } }], action: 'allow' } },
          ],
        },
      ],
    }),
  );
  const rules = config.routes[0]?.policy;
  assert.deepEqual(rules, [
    {
      action: 'allow',
      and: [
        { kind: 'domain', matcher: { is: 'example.com' }, path: 'routes[0].policy[0].allow.and[0]' },
        {
          kind: 'claim',
          claim: 'groups',
          matcher: { has: { starts_with: 'eng-' } },
          path: 'routes[0].policy[0].allow.and[1]',
        },
      ],
      or: [
        {
          kind: 'email',
          matcher: { in: ['a@example.com', 'b@example.com'] },
          path: 'routes[0].policy[0].allow.or[0]',
        },
        { kind: 'accept', path: 'routes[0].policy[0].allow.or[1]' },
      ],
      not: [],
      nor: [],
      path: 'routes[0].policy[0].allow',
    },
    {
      action: 'deny',
      and: [],
      or: [
        { kind: 'http_path', matcher: { starts_with: '/admin' }, path: 'routes[0].policy[1].deny.or[0]' },
        { kind: 'source_ip', cidrs: ['10.0.0.0/8', '2001:db8::1'], path: 'routes[0].policy[1].deny.or[1]' },
      ],
      not: [],
      nor: [
        {
          kind: 'claim',
          claim: 'email_verified',
          matcher: { has: { is: true } },
          path: 'routes[0].policy[1].deny.nor[0]',
        },
      ],
      path: 'routes[0].policy[1].deny',
    },
    {
      action: 'allow',
      and: [],
      or: [],
      not: [
        {
          kind: 'http_method',
          matcher: { not_in: ['GET', 'HEAD'] },
          path: 'routes[0].policy[2].allow.not[0]',
        },
      ],
      nor: [],
      path: 'routes[0].policy[2].allow',
    },
  ]);
});

test('a single rule map (not a list) is accepted', () => {
  const config = valid(
    base({
      routes: [
        {
          from: 'https://a.example.com',
          to: 'http://a:80',
          policy: { allow: { or: [{ authenticated_user: true }] } },
        },
      ],
    }),
  );
  assert.equal(config.routes[0]?.policy[0]?.or[0]?.path, 'routes[0].policy.allow.or[0]');
});

test('unknown criterion, operator, conditional and action are errors at their path with hints', () => {
  const list = policyProblems([
    { allow: { and: [{ email: { is: 'a@example.com' } }, { emial: 'x' }] } },
    { allow: { or: [{ email: { eq: 'x' } }, { 'claim/groups': { contains: 'x' } }], xor: [] } },
    { permit: { or: [] } },
  ]);
  assert.deepEqual(list, [
    'routes[3].policy[0].allow.and[1]: unknown policy criterion: emial (did you mean email?)',
    'routes[3].policy[1].allow.or[0].email.eq: unknown string matcher operator: eq',
    'routes[3].policy[1].allow.or[1].claim/groups.contains: unknown list matcher operator: contains (claims are lists: write {has: {contains: ...}})',
    'routes[3].policy[1].allow.xor: unsupported conditional "xor", only and, or, not, nor and action are allowed (did you mean or?)',
    'routes[3].policy[2].permit: unknown policy action: permit; use allow or deny',
  ]);
});

test('criterion shape errors', () => {
  assertProblem(
    policyProblems({ allow: { or: [{ email: 'a', domain: 'b' }] } }),
    'routes[3].policy.allow.or[0]',
    'exactly one key',
  );
  assertProblem(
    policyProblems({ allow: { or: { email: 'a' } } }),
    'routes[3].policy.allow.or',
    'expected a list of criteria',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ claim: 'x' }] } }),
    'routes[3].policy.allow.or[0]',
    'needs a claim name: claim/<name>',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ 'email/x': 'a' }] } }),
    'routes[3].policy.allow.or[0]',
    'takes no /x suffix',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ accept: false }] } }),
    'routes[3].policy.allow.or[0].accept',
    'remove the criterion',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ email: { in: 'a' } }] } }),
    'routes[3].policy.allow.or[0].email.in',
    'in matcher requires an array of strings',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ email: 3 }] } }),
    'routes[3].policy.allow.or[0].email',
    'expected a string',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ email: {} }] } }),
    'routes[3].policy.allow.or[0].email',
    'needs an operator',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ source_ip: '10.0.0.0/33' }] } }),
    'routes[3].policy.allow.or[0].source_ip',
    'is not an IP address or CIDR',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ client_certificate: { fingerprint: 'abc' } }] } }),
    'routes[3].policy.allow.or[0].client_certificate.fingerprint',
    'SHA-256 fingerprint',
  );
  assertProblem(
    policyProblems({ allow: { or: [{ device: { kind: 'x' } }] } }),
    'routes[3].policy.allow.or[0].device.kind',
    'unknown device field',
  );
  assertProblem(policyProblems('allow everyone'), 'routes[3].policy', 'expected a policy rule');
  assertProblem(policyProblems([{}]), 'routes[3].policy[0]', 'is an empty rule');
});

test('client certificate fingerprints are normalised; devices parse', () => {
  const fingerprint = 'AB:'.repeat(31) + 'AB';
  const reader = new Reader();
  const rules = parsePolicy(reader, 'p', {
    allow: { or: [{ client_certificate: { fingerprint } }, { device: { approved: true, is: 'd1' } }] },
  });
  assert.deepEqual(reader.problems, []);
  assert.deepEqual(rules?.[0]?.or, [
    { kind: 'client_certificate', fingerprint: ['ab'.repeat(32)], path: 'p.allow.or[0]' },
    { kind: 'device', approved: true, is: ['d1'], path: 'p.allow.or[1]' },
  ]);
});

test('policy problems of many routes are all reported together', () => {
  const bad = {
    from: 'https://a.example.com',
    to: 'http://a:80',
    policy: [{ allow: { and: [{ nope: 1 }] } }],
  };
  const list = problems(base({ routes: [bad, bad, { ...bad, from: 'https://b.example.com/x' }] }));
  for (const index of [0, 1, 2])
    assertProblem(list, `routes[${index}].policy[0].allow.and[0]`, 'unknown policy criterion: nope');
  assertProblem(list, 'routes[2].from', 'contains a path');
});
