/**
 * The Portcullis object's status for one build outcome: conditions Valid and Ready (with reason,
 * message and observedGeneration), the generation observed, every problem with its field, and
 * each claimed host's owner namespace (`hostOwners`, host-owners.ts: every replica reads it back).
 * Pure, so the watcher only writes what this returns; a condition that did not change keeps its
 * lastTransitionTime, and a status equal to the one written is not written again (the write
 * itself is a change the watcher sees). Messages come from validate and settings-document, which
 * never include a secret value.
 */
import type { Problem } from '../shared/errors.js';
import { isPlainObject } from '../config/value-readers.js';
import { canonicalJson } from '../shared/canonical-json.js';

/** What one build (or the refusal to build) said about a generation of the settings. */
export interface SettingsVerdict {
  readonly generation: number | undefined;
  /** Every problem, at its field (`spec.identityProvider.url`) or `` for the object as a whole. */
  readonly problems: readonly Problem[];
  /** Whether some earlier settings are in force (a refused change keeps them). */
  readonly serving: boolean;
  /** Each claimed host's owner namespace, recorded for every replica (host-owners.ts); unset: routes are not read. */
  readonly hostOwners?: Readonly<Record<string, string>>;
}

/** One condition, as the CRD's status schema has it. */
export interface Condition {
  readonly type: 'Valid' | 'Ready';
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
}

/** The status written to the object. */
export interface SettingsStatus {
  readonly observedGeneration?: number;
  readonly conditions: readonly Condition[];
  readonly errors: readonly { readonly field: string; readonly message: string }[];
  readonly hostOwners?: Readonly<Record<string, string>>;
}

/** A condition's message is bounded; the errors list carries every problem. */
const MESSAGE_LIMIT = 4096;

/** `field: message` per problem, the way `validate` prints them (the field `spec` for the object). */
export function problemLines(problems: readonly Problem[]): string[] {
  return problems.map((problem) => `${problem.path === '' ? 'spec' : problem.path}: ${problem.message}`);
}

function bounded(text: string): string {
  return text.length <= MESSAGE_LIMIT ? text : `${text.slice(0, MESSAGE_LIMIT - 1)}…`;
}

/** The conditions of the status `previous` (unknown data from the API server), by type. */
function previousConditions(previous: unknown): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  const conditions = isPlainObject(previous) ? previous.conditions : undefined;
  if (!Array.isArray(conditions)) return found;
  for (const condition of conditions) {
    if (isPlainObject(condition) && typeof condition.type === 'string') found.set(condition.type, condition);
  }
  return found;
}

/**
 * The status for `verdict`, given the object's current status `previous` and the time `now`.
 * Valid: the generation passes validation. Ready: it is in force; a refused change is Ready=False
 * with reason ChangeRefused while the last good settings keep serving.
 */
export function settingsStatus(verdict: SettingsVerdict, previous: unknown, now: Date): SettingsStatus {
  const valid = verdict.problems.length === 0;
  const summary = bounded(problemLines(verdict.problems).join('; '));
  const generation = verdict.generation === undefined ? {} : { observedGeneration: verdict.generation };
  const before = previousConditions(previous);
  const condition = (type: Condition['type'], status: 'True' | 'False', reason: string, message: string) => {
    const old = before.get(type);
    const same = old?.status === status && typeof old.lastTransitionTime === 'string';
    return {
      type,
      status,
      reason,
      message,
      ...generation,
      lastTransitionTime: same
        ? (old.lastTransitionTime as string)
        : now.toISOString().replace(/\.\d+Z$/, 'Z'),
    };
  };
  const conditions: Condition[] = [
    valid
      ? condition('Valid', 'True', 'Valid', 'the settings pass validation')
      : condition('Valid', 'False', 'Invalid', summary),
    valid
      ? condition('Ready', 'True', 'InForce', 'the settings are in force')
      : verdict.serving
        ? condition('Ready', 'False', 'ChangeRefused', `the last good settings keep serving; ${summary}`)
        : condition('Ready', 'False', 'NoValidSettings', `nothing is served yet; ${summary}`),
  ];
  return {
    ...generation,
    conditions,
    errors: verdict.problems.map((problem) => ({
      field: problem.path === '' ? 'spec' : problem.path,
      message: problem.message,
    })),
    ...(verdict.hostOwners === undefined || Object.keys(verdict.hostOwners).length === 0
      ? {}
      : { hostOwners: verdict.hostOwners }),
  };
}

/** Whether `status` is what the object already has (so writing it would change nothing). */
export function sameStatus(status: SettingsStatus, current: unknown): boolean {
  return canonicalJson(status) === canonicalJson(current ?? {});
}
