import type { CoreV1Api, V1ObjectReference } from '@kubernetes/client-node';

/** Longest Event message the API server takes. */
const EVENT_MESSAGE_LIMIT = 1024;

/** One Warning Event to write. */
export interface WarningEvent {
  /** The namespace the Event lives in (`default` for a cluster-scoped object). */
  readonly namespace: string;
  readonly involvedObject: V1ObjectReference;
  /** A CamelCase reason (`InvalidSettings`, `RouteRefused`). */
  readonly reason: string;
  /** What is wrong; cut to the API's limit. Never a secret value. */
  readonly message: string;
  /** This replica (the reporting instance). */
  readonly identity: string;
}

/**
 * Creates a Warning Event from Portcullis about `involvedObject`, so `kubectl describe` on that
 * object shows the problem. One shape for every Event Portcullis writes, so they can be found
 * by `reportingComponent` and `source`.
 */
export async function createWarningEvent(core: CoreV1Api, event: WarningEvent): Promise<void> {
  const now = new Date();
  const { namespace, message } = event;
  await core.createNamespacedEvent({
    namespace,
    body: {
      metadata: { generateName: `${event.involvedObject.name ?? 'portcullis'}.`, namespace },
      involvedObject: event.involvedObject,
      reason: event.reason,
      type: 'Warning',
      message:
        message.length <= EVENT_MESSAGE_LIMIT ? message : `${message.slice(0, EVENT_MESSAGE_LIMIT - 1)}…`,
      source: { component: 'portcullis' },
      reportingComponent: 'portcullis.dev/portcullis',
      reportingInstance: event.identity.slice(0, 128),
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    },
  });
}
