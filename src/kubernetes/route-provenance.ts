/**
 * parseConfig and translate name problems by key path in the config document (`routes[7].policy`,
 * `certificates[2].key`). For routes and certificates that came from Kubernetes objects, this maps
 * such a path back to the object and the annotation or field the value came from, so the problem
 * lands in that object's status with words its author recognises.
 */
import type { Problem } from '../shared/errors.js';
import { describeObject, type ObjectProblem, type ObjectRef } from './object-problems.js';
import type { RouteOrigin } from './route-assembly.js';

/** Where a listener certificate entry came from: the object that referenced its Secret. */
export interface CertificateOrigin {
  readonly object: ObjectRef;
  /** `spec.tls[0].secretName (Secret ns/name)`. */
  readonly where: string;
}

/** The origins of the Kubernetes part of a config document, and where that part starts in it. */
export interface DocumentOrigins {
  readonly routes: readonly RouteOrigin[];
  /** Index of the first Kubernetes route in the document's `routes` (0 when they are all). */
  readonly routesStart: number;
  readonly certificates: readonly CertificateOrigin[];
  readonly certificatesStart: number;
}

const INDEXED = /^(routes|certificates)\[(\d+)\](?:\.([A-Za-z0-9_]+))?(.*)$/;

/**
 * The object `problem` belongs to, with the annotation or field it came from, or undefined when
 * the key path is not in a Kubernetes route or certificate (a global setting's problem). The
 * message keeps the part of the path below the route key (`allow.and[0]: ...`).
 */
export function attributeProblem(problem: Problem, origins: DocumentOrigins): ObjectProblem | undefined {
  const found = INDEXED.exec(problem.path);
  if (found === null) return undefined;
  const [, list, indexText, key, rest] = found;
  const index = Number(indexText);
  if (list === 'certificates') {
    const origin = origins.certificates[index - origins.certificatesStart];
    if (origin === undefined) return undefined;
    return { object: origin.object, where: origin.where, message: problem.message };
  }
  const origin = origins.routes[index - origins.routesStart];
  if (origin === undefined) return undefined;
  const keyed = key === undefined ? undefined : origin.keys[key];
  const below = keyed === undefined ? `${key ?? ''}${rest ?? ''}` : (rest ?? '').replace(/^\./, '');
  const message = nameRoutes(problem.message, origins);
  return {
    object: origin.object,
    where: keyed ?? origin.where,
    message: below === '' ? message : `${below}: ${message}`,
  };
}

/**
 * `message` with each Kubernetes route it names by document path (`routes[12]`, as in "never
 * matches: routes[12] comes first") named by its object and field instead, which its reader knows.
 */
function nameRoutes(message: string, origins: DocumentOrigins): string {
  return message.replace(/\broutes\[(\d+)\]/g, (text, indexText: string) => {
    const origin = origins.routes[Number(indexText) - origins.routesStart];
    return origin === undefined ? text : `${describeObject(origin.object)} (${origin.where})`;
  });
}
