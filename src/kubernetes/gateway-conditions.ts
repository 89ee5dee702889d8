/**
 * Conditions as the Gateway API's status schemas take them (metav1.Condition): type, status,
 * reason, message, observedGeneration and a lastTransitionTime that moves only when the status
 * does, so that a status recomputed on every pass equals the one written and is not written again
 * (each write is itself a change every replica sees). Pure.
 */
import { isPlainObject } from '../config/value-readers.js';

/** One condition as written to a Gateway API object's status. */
export interface GatewayCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
}

/** A condition before its time and generation are filled in. */
export interface ConditionFacts {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** A message is bounded well below the schema's 32768 characters; Events and logs carry every problem. */
const MESSAGE_LIMIT = 4096;

/** `text`, cut to MESSAGE_LIMIT characters with an ellipsis. */
export function boundedMessage(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

/** `now` as the schema's date-time, to the second (as the API server's own conditions are). */
export function conditionTime(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * The conditions `facts` for an object of `generation`, each keeping the lastTransitionTime of the
 * condition of its type in `previous` (the current `conditions` array, unknown data from the API
 * server) when its status is unchanged, else `now`.
 */
export function withTimes(
  facts: readonly ConditionFacts[],
  previous: unknown,
  generation: number | undefined,
  now: Date,
): GatewayCondition[] {
  const before = new Map<string, Record<string, unknown>>();
  if (Array.isArray(previous))
    for (const condition of previous)
      if (isPlainObject(condition) && typeof condition.type === 'string')
        before.set(condition.type, condition);
  return facts.map((fact) => {
    const old = before.get(fact.type);
    const kept =
      old?.status === fact.status && typeof old.lastTransitionTime === 'string'
        ? old.lastTransitionTime
        : conditionTime(now);
    return {
      type: fact.type,
      status: fact.status,
      reason: fact.reason,
      message: boundedMessage(fact.message),
      ...(generation === undefined ? {} : { observedGeneration: generation }),
      lastTransitionTime: kept,
    };
  });
}

/** The field of an object's `status` (unknown data from the API server), or undefined. */
export function statusField(object: unknown, field: string): unknown {
  if (!isPlainObject(object) || !isPlainObject(object.status)) return undefined;
  return object.status[field];
}
