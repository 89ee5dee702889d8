import { BlockList, isIP } from 'node:net';
import type { Criterion, PolicyValue, StringMatcher } from '../../ir/policy.js';
import {
  canonicalDomain,
  canonicalEmail,
  canonicalUserId,
  domainOfCanonical,
} from '../../shared/email-address.js';
import type { Session } from '../../session/session.js';
import type { AuthorizeRequest } from '../decision.js';
import { claimValues } from './claims.js';
import { compileListMatcher, compileStringMatcher } from './matchers.js';

/** What a criterion sees: the request and the session (undefined when there is none). */
export interface EvalContext {
  readonly request: AuthorizeRequest;
  readonly session: Session | undefined;
}

/** A criterion's result: whether it holds, and the reason, as in the peer's reason strings. */
export interface CriterionResult {
  readonly value: boolean;
  readonly reason: string;
}

export type CompiledCriterion = (context: EvalContext) => CriterionResult;

const UNAUTHENTICATED: CriterionResult = { value: false, reason: 'user-unauthenticated' };

/** Pre-built results so evaluation allocates nothing per request. */
function results(name: string): { ok: CriterionResult; no: CriterionResult } {
  return { ok: { value: true, reason: `${name}-ok` }, no: { value: false, reason: `${name}-unauthorized` } };
}

/**
 * Compiles one validated criterion into a function. Session-based criteria answer
 * `user-unauthenticated` without a session, which makes the decision a sign-in prompt rather than
 * a 403. Criteria this edition cannot evaluate (client certificates, devices) are false: fail closed.
 */
export function compileCriterion(criterion: Criterion): CompiledCriterion {
  switch (criterion.kind) {
    case 'accept':
      return () => ({ value: true, reason: 'accept' });
    case 'reject':
      return () => ({ value: false, reason: 'reject' });
    case 'authenticated_user': {
      const { ok } = results('user');
      return ({ session }) => (session !== undefined && session.userId !== '' ? ok : UNAUTHENTICATED);
    }
    case 'email':
    case 'domain':
      return compileAddressCriterion(criterion.kind, criterion.matcher);
    case 'user':
      return compileUserCriterion(criterion.matcher);
    case 'claim': {
      const test = compileListMatcher(criterion.matcher);
      const { ok, no } = results('claim');
      const name = criterion.claim;
      return ({ session }) =>
        session === undefined ? UNAUTHENTICATED : test(claimValues(session.claims, name)) ? ok : no;
    }
    case 'http_method': {
      const test = compileStringMatcher(criterion.matcher);
      const { ok, no } = results('http-method');
      return ({ request }) => (test(request.method) ? ok : no);
    }
    case 'http_path': {
      const test = compileStringMatcher(criterion.matcher);
      const { ok, no } = results('http-path');
      return ({ request }) => (test(decodePath(request.path)) ? ok : no);
    }
    case 'cors_preflight': {
      const yes = { value: true, reason: 'cors-request' };
      const no = { value: false, reason: 'non-cors-request' };
      return ({ request }) =>
        request.method === 'OPTIONS' &&
        request.headers['access-control-request-method'] !== undefined &&
        request.headers.origin !== undefined
          ? yes
          : no;
    }
    case 'source_ip': {
      const blocks = new BlockList();
      for (const cidr of criterion.cidrs) addCidr(blocks, cidr);
      const { ok, no } = results('source-ip');
      return ({ request }) => {
        const family = isIP(request.sourceIp);
        return family !== 0 && blocks.check(request.sourceIp, family === 4 ? 'ipv4' : 'ipv6') ? ok : no;
      };
    }
    case 'client_certificate':
    case 'invalid_client_certificate':
    case 'device': {
      const unsupported = { value: false, reason: `${criterion.kind.replace(/_/g, '-')}-unsupported` };
      return () => unsupported;
    }
  }
}

/**
 * `email` and `domain`: the session's address in canonical form (shared/email-address.ts) against
 * operands in the same form, so case never separates an address from a rule about it, allow or
 * deny. An address the provider did not verify (Session.emailVerified false; see
 * idp_trust_unverified_email), or one that does not parse as exactly one address, counts as no
 * address: the criterion is false. A session stored before the verification was recorded
 * (emailVerified undefined) cannot tell, so it is asked to sign in again (`user-unauthenticated`).
 */
function compileAddressCriterion(kind: 'email' | 'domain', matcher: StringMatcher): CompiledCriterion {
  const canon = kind === 'email' ? canonicalEmail : canonicalDomain;
  const test = compileStringMatcher(canonicalOperands(matcher, canon, (text) => text.toLowerCase()));
  const { ok, no } = results(kind);
  const read =
    kind === 'email'
      ? (address: string | undefined) => address
      : (address: string | undefined) => (address === undefined ? undefined : domainOfCanonical(address));
  return ({ session }) => {
    if (session === undefined || session.emailVerified === undefined) return UNAUTHENTICATED;
    const address = session.emailVerified ? canonicalEmail(session.email) : undefined;
    return test(read(address)) ? ok : no;
  };
}

/**
 * `user`: the exact operators (is, not, in, not_in) compare canonicalUserId forms, so an id that is
 * an address matches whatever its case; the fragment operators (contains, starts_with, ends_with)
 * see the id as sent, as before, so no existing fragment rule stops matching. Both are AND-ed.
 */
function compileUserCriterion(matcher: StringMatcher): CompiledCriterion {
  const { contains, starts_with, ends_with, ...exact } = matcher;
  const fragments: StringMatcher = {
    ...(contains === undefined ? {} : { contains }),
    ...(starts_with === undefined ? {} : { starts_with }),
    ...(ends_with === undefined ? {} : { ends_with }),
  };
  const exactTest =
    Object.keys(exact).length === 0
      ? undefined
      : compileStringMatcher(canonicalOperands(exact, canonicalUserId, (text) => text));
  const fragmentTest = Object.keys(fragments).length === 0 ? undefined : compileStringMatcher(fragments);
  const { ok, no } = results('user');
  return ({ session }) => {
    if (session === undefined) return UNAUTHENTICATED;
    const id = session.userId;
    const holds =
      (exactTest !== undefined || fragmentTest !== undefined) &&
      (exactTest === undefined || exactTest(canonicalUserId(id))) &&
      (fragmentTest === undefined || fragmentTest(id));
    return holds ? ok : no;
  };
}

/**
 * `matcher` with its exact operands in canonical form (an operand that has none stays as written,
 * and so never equals a canonical value) and its fragments through `fragment`. Validation already
 * stores canonical values; doing it again here keeps the evaluator right whatever built the IR.
 */
function canonicalOperands(
  matcher: StringMatcher,
  canon: (text: string) => string | undefined,
  fragment: (text: string) => string,
): StringMatcher {
  const exact = (value: PolicyValue): string => canon(String(value)) ?? String(value);
  return {
    ...(matcher.is === undefined ? {} : { is: exact(matcher.is) }),
    ...(matcher.not === undefined ? {} : { not: exact(matcher.not) }),
    ...(matcher.in === undefined ? {} : { in: matcher.in.map(exact) }),
    ...(matcher.not_in === undefined ? {} : { not_in: matcher.not_in.map(exact) }),
    ...(matcher.contains === undefined ? {} : { contains: fragment(matcher.contains) }),
    ...(matcher.starts_with === undefined ? {} : { starts_with: fragment(matcher.starts_with) }),
    ...(matcher.ends_with === undefined ? {} : { ends_with: fragment(matcher.ends_with) }),
  };
}

function decodePath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function addCidr(blocks: BlockList, cidr: string): void {
  const [address = '', bits] = cidr.split('/');
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (bits === undefined) blocks.addAddress(address, family);
  else blocks.addSubnet(address, Number(bits), family);
}
