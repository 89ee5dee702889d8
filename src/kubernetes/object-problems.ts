/**
 * Problems found in Kubernetes objects, each naming the object (kind, namespace, name) and where
 * in it (an annotation, a spec field), so the watcher can write the message into that object's
 * own status and an Event, and the log names the object an operator has to fix.
 */
import type { ObjectMeta } from './objects.js';

/** Which object a route, certificate or problem comes from. */
export interface ObjectRef {
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** A problem in one object: `where` is an annotation (`annotation portcullis.dev/policy`) or a field path. */
export interface ObjectProblem {
  readonly object: ObjectRef;
  readonly where?: string;
  readonly message: string;
}

/** The ref of an object of `kind` with metadata `metadata`. */
export function refOf(kind: string, metadata: ObjectMeta): ObjectRef {
  return metadata.namespace === undefined
    ? { kind, name: metadata.name }
    : { kind, namespace: metadata.namespace, name: metadata.name };
}

/** `Ingress ns/name`, or `GatewayClass name` for a cluster-scoped object. */
export function describeObject(object: ObjectRef): string {
  return `${object.kind} ${object.namespace === undefined ? '' : `${object.namespace}/`}${object.name}`;
}

/** `Ingress ns/name: annotation portcullis.dev/policy: <message>`: the form logs, status and Events use. */
export function formatObjectProblem(problem: ObjectProblem): string {
  const where = problem.where === undefined ? '' : `${problem.where}: `;
  return `${describeObject(problem.object)}: ${where}${problem.message}`;
}

/** `annotation <name>`: how a problem in an annotation says where it is. */
export function annotationWhere(name: string): string {
  return `annotation ${name}`;
}
