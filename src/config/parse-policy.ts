import {
  CRITERIA,
  FLAG_CRITERIA,
  POLICY_OPERATORS,
  STRING_CRITERIA,
  type Criterion,
  type PolicyOperator,
  type PolicyRule,
} from './policy-types.js';
import {
  parseListMatcher,
  parseSourceIp,
  parseStringMatcher,
  parseStringOrList,
} from './parse-policy-matchers.js';
import { canonicalIdentityMatcher } from './parse-identity-values.js';
import { findRemoved, removedMessage } from './removed-options.js';
import { closestKey, describe, isPlainObject, type Reader } from './value-readers.js';

const ACTIONS = ['allow', 'deny'] as const;

/**
 * Validates a route's `policy` (pomerium-behaviour.md section 2.1): one rule map or a list of
 * them; each key of a rule map is an action (allow, deny) holding operator blocks (and, or, not,
 * nor), each a list of one-key criteria. Every problem is recorded at its path, such as
 * `routes[3].policy[0].allow.and[1]`; returns undefined when there was any.
 */
export function parsePolicy(reader: Reader, path: string, raw: unknown): PolicyRule[] | undefined {
  const before = reader.problems.length;
  const rules: PolicyRule[] = [];
  if (Array.isArray(raw)) {
    raw.forEach((rule, index) => rules.push(...parseRuleMap(reader, `${path}[${index}]`, rule)));
  } else if (isPlainObject(raw)) {
    rules.push(...parseRuleMap(reader, path, raw));
  } else {
    reader.problem(
      path,
      `expected a policy rule such as {allow: {or: [{email: {is: a@example.com}}]}} or a list of them, got ${describe(raw)}`,
    );
  }
  return reader.problems.length === before ? rules : undefined;
}

function parseRuleMap(reader: Reader, path: string, raw: unknown): PolicyRule[] {
  if (!isPlainObject(raw)) {
    reader.problem(path, `expected a rule map with allow or deny, got ${describe(raw)}`);
    return [];
  }
  if (Object.keys(raw).length === 0) reader.problem(path, 'is an empty rule; give allow or deny');
  const rules: PolicyRule[] = [];
  for (const [action, body] of Object.entries(raw)) {
    const at = `${path}.${action}`;
    if (!(ACTIONS as readonly string[]).includes(action)) {
      const hint = closestKey(action, ACTIONS);
      reader.problem(
        at,
        `unknown policy action: ${action}; use allow or deny${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
      );
      continue;
    }
    const rule = parseRule(reader, at, action as PolicyRule['action'], body);
    if (rule !== undefined) rules.push(rule);
  }
  return rules;
}

function parseRule(
  reader: Reader,
  path: string,
  action: PolicyRule['action'],
  raw: unknown,
): PolicyRule | undefined {
  if (!isPlainObject(raw)) {
    return reader.problem(path, `expected a map of and, or, not, nor blocks, got ${describe(raw)}`);
  }
  const blocks: Record<PolicyOperator, Criterion[]> = { and: [], or: [], not: [], nor: [] };
  for (const [operator, list] of Object.entries(raw)) {
    const at = `${path}.${operator}`;
    if (operator === 'action') {
      // The peer ignores `action` inside a rule; one that contradicts the rule's own action would
      // mislead a reader about what the rule does, so it must agree.
      if (list !== action)
        reader.problem(at, `must be ${action}, the action this rule is under, or be removed`);
      continue;
    }
    if (!(POLICY_OPERATORS as readonly string[]).includes(operator)) {
      const hint = closestKey(operator, POLICY_OPERATORS);
      reader.problem(
        at,
        `unsupported conditional "${operator}", only and, or, not, nor and action are allowed${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
      );
      continue;
    }
    if (!Array.isArray(list)) {
      reader.problem(at, `expected a list of criteria, got ${describe(list)}`);
      continue;
    }
    list.forEach((criterion, index) => {
      const parsed = parseCriterion(reader, `${at}[${index}]`, criterion);
      if (parsed !== undefined) blocks[operator as PolicyOperator].push(parsed);
    });
  }
  return { action, ...blocks, path };
}

/** One criterion: a map with exactly one key, `name` or `name/subpath`, and its data. */
function parseCriterion(reader: Reader, path: string, raw: unknown): Criterion | undefined {
  if (!isPlainObject(raw) || Object.keys(raw).length !== 1) {
    return reader.problem(
      path,
      'each criterion must be a map with exactly one key, such as {email: {is: a@example.com}}',
    );
  }
  const [key, data] = Object.entries(raw)[0] as [string, unknown];
  const slash = key.indexOf('/');
  const name = slash === -1 ? key : key.slice(0, slash);
  const subpath = slash === -1 ? undefined : key.slice(slash + 1);
  const removed = findRemoved(name, 'criterion');
  if (removed !== undefined) return reader.problem(path, removedMessage(removed, `the ${name} criterion`));
  if (!(CRITERIA as readonly string[]).includes(name)) {
    const hint = closestKey(name, CRITERIA);
    return reader.problem(
      path,
      `unknown policy criterion: ${name}${hint === undefined ? '' : ` (did you mean ${hint}?)`}`,
    );
  }
  const at = `${path}.${key}`;
  if (name === 'claim') {
    if (subpath === undefined || subpath.trim() === '') {
      return reader.problem(
        path,
        'the claim criterion needs a claim name: claim/<name>, such as claim/groups',
      );
    }
    const matcher = parseListMatcher(reader, at, data);
    return matcher === undefined ? undefined : { kind: 'claim', claim: subpath, matcher, path };
  }
  if (subpath !== undefined) return reader.problem(path, `the ${name} criterion takes no /${subpath} suffix`);
  return parseCriterionData(reader, path, at, name, data);
}

function parseCriterionData(
  reader: Reader,
  path: string,
  at: string,
  name: string,
  data: unknown,
): Criterion | undefined {
  if ((FLAG_CRITERIA as readonly string[]).includes(name)) {
    if (data === false) {
      return reader.problem(at, `${name}: false would still count as listed; remove the criterion instead`);
    }
    // Anything but true, nothing or {} (such as `no` or "false") reads as if it meant something.
    if (data !== true && data !== null && !(isPlainObject(data) && Object.keys(data).length === 0)) {
      return reader.problem(at, `takes no value; write ${name}: true, got ${describe(data)}`);
    }
    return { kind: name as (typeof FLAG_CRITERIA)[number], path };
  }
  if ((STRING_CRITERIA as readonly string[]).includes(name)) {
    const parsed = parseStringMatcher(reader, at, data, 'string');
    // Addresses, domains and ids are stored in the form the evaluator compares (any case matches).
    const matcher =
      parsed !== undefined && (name === 'email' || name === 'domain' || name === 'user')
        ? canonicalIdentityMatcher(reader, at, !isPlainObject(data), name, parsed)
        : parsed;
    return matcher === undefined
      ? undefined
      : { kind: name as (typeof STRING_CRITERIA)[number], matcher, path };
  }
  if (name === 'source_ip') {
    const cidrs = parseSourceIp(reader, at, data);
    return cidrs === undefined ? undefined : { kind: 'source_ip', cidrs, path };
  }
  if (name === 'client_certificate') return parseClientCertificate(reader, path, at, data);
  return parseDevice(reader, path, at, data);
}

function parseClientCertificate(
  reader: Reader,
  path: string,
  at: string,
  data: unknown,
): Criterion | undefined {
  if (!isPlainObject(data) || Object.keys(data).length === 0) {
    return reader.problem(at, 'expected a map with fingerprint, spki_hash, san_email, san_dns or san_uri');
  }
  const before = reader.problems.length;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === 'fingerprint') {
      out.fingerprint = parseStringOrList(
        reader,
        `${at}.${key}`,
        value,
        'a SHA-256 fingerprint (64 hex digits)',
        (text) => {
          const hex = text.replace(/:/g, '').toLowerCase();
          return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
        },
      );
    } else if (key === 'spki_hash') {
      out.spki_hash = parseStringOrList(
        reader,
        `${at}.${key}`,
        value,
        'a base64 SHA-256 SPKI hash',
        (text) => (/^[A-Za-z0-9+/]{43}=$/.test(text) ? text : undefined),
      );
    } else if (key === 'san_email' || key === 'san_dns' || key === 'san_uri') {
      out[key] = parseStringMatcher(reader, `${at}.${key}`, value, 'string');
    } else {
      reader.problem(
        `${at}.${key}`,
        'unknown client_certificate field; use fingerprint, spki_hash, san_email, san_dns or san_uri',
      );
    }
  }
  return reader.problems.length === before
    ? ({ kind: 'client_certificate', ...out, path } as Criterion)
    : undefined;
}

function parseDevice(reader: Reader, path: string, at: string, data: unknown): Criterion | undefined {
  if (!isPlainObject(data)) return reader.problem(at, 'expected a map with is, approved or type');
  const before = reader.problems.length;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === 'is') {
      out.is = parseStringOrList(reader, `${at}.is`, value, 'a device id', (text) =>
        text === '' ? undefined : text,
      );
    } else if (key === 'approved') {
      out.approved = reader.bool(`${at}.approved`, value);
    } else if (key === 'type') {
      out.type = reader.string(`${at}.type`, value);
    } else {
      reader.problem(`${at}.${key}`, 'unknown device field; use is, approved or type');
    }
  }
  return reader.problems.length === before ? ({ kind: 'device', ...out, path } as Criterion) : undefined;
}
