import { BlockList, isIP } from 'node:net';
import type { Criterion } from '../../ir/policy.js';
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
    case 'user': {
      const test = compileStringMatcher(criterion.matcher);
      const { ok, no } = results(criterion.kind);
      const read = sessionField(criterion.kind);
      return ({ session }) => (session === undefined ? UNAUTHENTICATED : test(read(session)) ? ok : no);
    }
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

function sessionField(kind: 'email' | 'domain' | 'user'): (session: Session) => string | undefined {
  if (kind === 'user') return (session) => session.userId;
  if (kind === 'email') return (session) => session.email;
  return (session) => {
    const email = session.email;
    const at = email?.lastIndexOf('@') ?? -1;
    return email === undefined || at < 0 ? undefined : email.slice(at + 1);
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
