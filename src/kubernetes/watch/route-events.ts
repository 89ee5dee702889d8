import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import {
  describeObject,
  formatObjectProblem,
  type ObjectProblem,
  type ObjectRef,
} from '../object-problems.js';
import type { RouteObjects } from '../cluster-state.js';
import { describeKubeError } from './kube-errors.js';
import { createWarningEvent } from './warning-event.js';

/** What RouteEvents needs. */
export interface RouteEventsOptions {
  readonly core: CoreV1Api;
  /** This replica: the Events' reporting instance. */
  readonly identity: string;
  readonly logger: Logger;
}

/** The apiVersion of each kind a route problem can name. */
const API_VERSIONS: Readonly<Record<string, string>> = {
  Ingress: 'networking.k8s.io/v1',
  IngressClass: 'networking.k8s.io/v1',
  HTTPRoute: 'gateway.networking.k8s.io/v1',
  Gateway: 'gateway.networking.k8s.io/v1',
  GatewayClass: 'gateway.networking.k8s.io/v1',
};

/** The objects of each kind in RouteObjects, to find a problem's object (its uid). */
const LISTS: Readonly<Record<string, keyof RouteObjects>> = {
  Ingress: 'ingresses',
  IngressClass: 'ingressClasses',
  HTTPRoute: 'httpRoutes',
  Gateway: 'gateways',
  GatewayClass: 'gatewayClasses',
};

/** What an Event and its "already reported" key read of a problem's object. */
interface FoundMeta {
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
}

/** Events about a cluster-scoped object live in `default` (the API server refuses other namespaces). */
const CLUSTER_EVENT_NAMESPACE = 'default';

/**
 * Reports problems in route objects as a Warning Event (reason `RouteRefused`) on each object, so
 * `kubectl describe ingress` shows why its change does not serve and what serves instead. A problem is reported once
 * while it lasts (a resync or another object's change does not repeat it) and again if it comes
 * back after being fixed. Messages name annotations and fields, never Secret values. Only the
 * Lease holder calls it; failures are logged and left to the next change.
 */
export class RouteEvents {
  /**
   * The problems last reported (formatObjectProblem and outcome), each with the object's uid and
   * generation: not its resourceVersion, which every status write (ours included) moves, so an
   * Event would be written again after each Gateway API status patch.
   */
  private reported = new Set<string>();

  constructor(private readonly options: RouteEventsOptions) {}

  /**
   * Reports each of `problems` not reported yet, its message ending in `outcomeOf` it (what serves
   * in its place: "its last good version keeps serving"); a new outcome is reported again.
   */
  async report(
    problems: readonly ObjectProblem[],
    objects: RouteObjects,
    outcomeOf: (problem: ObjectProblem) => string,
  ): Promise<void> {
    const now = new Set<string>();
    for (const problem of problems) {
      const found = findObject(problem.object, objects);
      const outcome = outcomeOf(problem);
      const key = [found?.uid ?? '', found?.generation ?? '', formatObjectProblem(problem), outcome].join(
        '\u0000',
      );
      if (now.has(key)) continue;
      now.add(key);
      if (this.reported.has(key)) continue;
      try {
        await this.event(problem, found, outcome);
      } catch (err) {
        this.options.logger.warn(
          { object: describeObject(problem.object), error: describeKubeError(err) },
          'could not write an Event about a route object',
        );
        now.delete(key);
      }
    }
    this.reported = now;
  }

  private async event(problem: ObjectProblem, found: FoundMeta | undefined, outcome: string): Promise<void> {
    const { object } = problem;
    await createWarningEvent(this.options.core, {
      namespace: object.namespace ?? CLUSTER_EVENT_NAMESPACE,
      involvedObject: {
        apiVersion: API_VERSIONS[object.kind] ?? 'v1',
        kind: object.kind,
        name: object.name,
        ...(object.namespace === undefined ? {} : { namespace: object.namespace }),
        ...(found?.uid === undefined ? {} : { uid: found.uid }),
        ...(found?.resourceVersion === undefined ? {} : { resourceVersion: found.resourceVersion }),
      },
      reason: 'RouteRefused',
      message: `${formatObjectProblem(problem)}; ${outcome}`,
      identity: this.options.identity,
    });
  }
}

/** The listed object `ref` names (its metadata), if it is one the route source read. */
function findObject(ref: ObjectRef, objects: RouteObjects): FoundMeta | undefined {
  const list = LISTS[ref.kind];
  if (list === undefined) return undefined;
  const items = objects[list] as readonly {
    readonly metadata: FoundMeta & { readonly name: string; readonly namespace?: string };
  }[];
  return items.find(
    ({ metadata }) => metadata.name === ref.name && (metadata.namespace ?? undefined) === ref.namespace,
  )?.metadata;
}
