/**
 * The build rounds of one watcher pass (per-object isolation, last-accepted.ts): build; when the
 * build names problems in route objects (found before the build, or validate's attributed to an
 * object), replace or leave out those objects and build again, until a round names no object whose
 * fate can still change. A round can find problems only validate sees, or problems a replaced
 * version has, so how many rounds a pass needs depends on the objects: every round but the last
 * changes at least one object's fate, and an object's fate changes at most twice (live -> its last
 * accepted version -> left out), so the rounds end within twice the route objects plus one. The
 * bound is a guard only; if it is ever hit, or route problems remain that no substitution can set
 * aside, nothing new is published and that is said as a problem of the settings (`unresolved`),
 * never left silent. A problem found in an object's last accepted version says so (see
 * `aboutBuiltVersion`). No I/O here: `build` does it.
 */
import type { Problem } from '../shared/errors.js';
import { describeObject, type ObjectProblem } from './object-problems.js';
import {
  refKey,
  routeObjectCount,
  substituteProblemObjects,
  type AcceptedObjects,
  type Substitution,
} from './last-accepted.js';

/** What one round's build gave: its global problems (the settings'), and whether it is in force. */
export interface RoundBuild {
  readonly ok: boolean;
  readonly problems: readonly Problem[];
}

/** What the rounds came to. */
export interface RoundsResult<B extends RoundBuild> {
  /** The last round's build. */
  readonly built: B;
  /** The last round's inputs (undefined when there are no routes: the settings alone). */
  readonly inputs: Substitution | undefined;
  /** Every route problem found, in every round. */
  readonly routeProblems: readonly ObjectProblem[];
  /** How many builds ran. */
  readonly rounds: number;
  /** Set when route problems kept every build from serving and could not be set aside. */
  readonly unresolved: Problem | undefined;
}

/**
 * Runs `build` on `first` (the live inputs), then on each substitution of the objects the last
 * round's problems named (`build` pushes those to its second argument), while a round named some
 * and the settings had none (see the module comment).
 */
export async function isolationRounds<B extends RoundBuild>(
  first: Substitution | undefined,
  accepted: AcceptedObjects,
  build: (inputs: Substitution | undefined, found: ObjectProblem[]) => Promise<B>,
): Promise<RoundsResult<B>> {
  const bound = first === undefined ? 1 : 2 * routeObjectCount(first.routes) + 1;
  const routeProblems: ObjectProblem[] = [];
  let inputs = first;
  let found: ObjectProblem[] = [];
  let built = await build(inputs, found);
  let rounds = 1;
  let stuck = false;
  while (found.length > 0 && built.problems.length === 0 && !built.ok) {
    routeProblems.push(...found.map((problem) => aboutBuiltVersion(problem, inputs)));
    const next =
      inputs === undefined || rounds >= bound
        ? undefined
        : substituteProblemObjects(
            inputs,
            found.map((problem) => problem.object),
            accepted,
          );
    if (next === undefined) {
      stuck = true;
      break;
    }
    found = [];
    inputs = next;
    built = await build(inputs, found);
    rounds += 1;
  }
  if (!stuck) routeProblems.push(...found.map((problem) => aboutBuiltVersion(problem, inputs)));
  const unresolved = stuck ? unresolvedProblem(found, rounds, rounds >= bound) : undefined;
  return { built, inputs, routeProblems, rounds, unresolved };
}

/**
 * `problem` as found in a build of `inputs`: when its object was built as its last accepted
 * version there, the problem is that version's, not the live object's. Its message says so, and
 * its field (`where`) moves into the message: the live object's generation may have other
 * listeners or rules at those indexes, so status must not map it to a listener or parent of the
 * live object (gateway-status.ts, httproute-status.ts); it is reported for the object as a whole.
 */
function aboutBuiltVersion(problem: ObjectProblem, inputs: Substitution | undefined): ObjectProblem {
  if (inputs?.fates.get(refKey(problem.object)) !== 'previous') return problem;
  const where = problem.where === undefined ? '' : `${problem.where}: `;
  return { object: problem.object, message: `its last good version: ${where}${problem.message}` };
}

/** The settings-level problem for route problems no round could set aside. */
function unresolvedProblem(found: readonly ObjectProblem[], rounds: number, bounded: boolean): Problem {
  const objects = [...new Set(found.map((problem) => describeObject(problem.object)))].join(', ');
  const why = bounded
    ? `still had problems after ${rounds} build rounds (the most a pass runs)`
    : 'have problems that leaving objects out does not remove';
  return {
    path: '',
    message: `route objects ${why}: ${objects}; no config with the cluster's other changes was built`,
  };
}
