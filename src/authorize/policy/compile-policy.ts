import type { Criterion, PolicyRule } from '../../ir/policy.js';
import {
  compileCriterion,
  type CompiledCriterion,
  type CriterionResult,
  type EvalContext,
} from './criteria.js';

/** What a route's policy says about one request. `reasons` explain the outcome that decided it. */
export interface PolicyOutcome {
  readonly allow: boolean;
  readonly deny: boolean;
  /** Some allow or deny reason is `user-unauthenticated`: the user should sign in first. */
  readonly unauthenticated: boolean;
  readonly allowReasons: readonly string[];
  readonly denyReasons: readonly string[];
}

export type CompiledPolicy = (context: EvalContext) => PolicyOutcome;

type Block = {
  readonly negate: boolean;
  readonly all: boolean;
  readonly criteria: readonly CompiledCriterion[];
};

/**
 * Compiles a route's rules once per config version into one function, with the peer's exact
 * semantics: `and` all true, `or` any true, `not` all false, `nor` at least one false; the
 * non-empty blocks of a rule and the rules of one action are OR-ed; an action with no blocks is
 * false. Reasons are those of the true results when an action holds, else of the false ones.
 */
export function compilePolicy(rules: readonly PolicyRule[]): CompiledPolicy {
  const allow = compileAction(rules.filter((rule) => rule.action === 'allow'));
  const deny = compileAction(rules.filter((rule) => rule.action === 'deny'));
  return (context) => {
    const allowReasons: string[] = [];
    const denyReasons: string[] = [];
    const allowed = allow(context, allowReasons);
    const denied = deny(context, denyReasons);
    return {
      allow: allowed,
      deny: denied,
      unauthenticated:
        allowReasons.includes('user-unauthenticated') || denyReasons.includes('user-unauthenticated'),
      allowReasons,
      denyReasons,
    };
  };
}

function compileAction(rules: readonly PolicyRule[]): (context: EvalContext, reasons: string[]) => boolean {
  const blocks: Block[] = [];
  const add = (criteria: readonly Criterion[], negate: boolean, all: boolean): void => {
    if (criteria.length > 0) blocks.push({ negate, all, criteria: criteria.map(compileCriterion) });
  };
  for (const rule of rules) {
    add(rule.and, false, true);
    add(rule.or, false, false);
    add(rule.not, true, true);
    add(rule.nor, true, false);
  }
  if (blocks.length === 0) return () => false;
  return (context, reasons) => {
    const trueReasons: string[] = [];
    const falseReasons: string[] = [];
    let any = false;
    for (const block of blocks) {
      const blockTrue = evaluateBlock(block, context, trueReasons, falseReasons);
      any ||= blockTrue;
    }
    for (const reason of any ? trueReasons : falseReasons)
      if (!reasons.includes(reason)) reasons.push(reason);
    return any;
  };
}

/** Evaluates every criterion of a block (no short-circuit, so reasons are complete). */
function evaluateBlock(
  block: Block,
  context: EvalContext,
  trueReasons: string[],
  falseReasons: string[],
): boolean {
  const results: CriterionResult[] = block.criteria.map((criterion) => criterion(context));
  const effective = results.map((result) => result.value !== block.negate);
  const value = block.all ? effective.every(Boolean) : effective.some(Boolean);
  results.forEach((result, index) => {
    if (effective[index] === value) (value ? trueReasons : falseReasons).push(result.reason);
  });
  return value;
}
