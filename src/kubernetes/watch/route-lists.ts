import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  NetworkingV1Api,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
} from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import type { RouteObjects } from '../cluster-state.js';
import { FollowedList } from './followed-list.js';
import { apiStatusCode } from './kube-errors.js';

/** What RouteLists needs. */
export interface RouteListsOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger: Logger;
  /** Called after every change of any followed collection (and at each resync). */
  readonly onChange: () => void;
  readonly resyncMs?: number;
}

/** The Gateway API group and version Portcullis reads. */
const GATEWAY_GROUP = 'gateway.networking.k8s.io';
const GATEWAY_VERSION = 'v1';

/** The answers that mean a Gateway API collection is not there to read: not installed, or not granted. */
const ABSENT_STATUSES: ReadonlySet<number> = new Set([403, 404]);

/** The CRD whose arrival turns the Gateway API on (the collection Portcullis checks for). */
const HTTPROUTE_CRD = `httproutes.${GATEWAY_GROUP}`;

/** The collections that exist only with the Gateway API. */
type GatewayKey = 'gatewayClasses' | 'gateways' | 'httpRoutes';
const GATEWAY_KEYS: readonly string[] = ['gatewayClasses', 'gateways', 'httpRoutes'] satisfies GatewayKey[];

type Lists = { readonly [K in keyof RouteObjects]: FollowedList<KubernetesObject> | undefined };

/** A CustomResourceDefinition as far as its readiness goes. */
interface CrdObject extends KubernetesObject {
  readonly spec?: { readonly versions?: readonly { readonly name?: string; readonly served?: boolean }[] };
  readonly status?: { readonly conditions?: readonly { readonly type?: string; readonly status?: string }[] };
}

/**
 * The route source's collections, each one list-and-watch (FollowedList) across every namespace:
 * IngressClasses, Ingresses, Services and EndpointSlices always, and GatewayClasses, Gateways and
 * HTTPRoutes once the Gateway API CRDs are installed. Without them at start, Ingress works alone
 * (said in one log line) and the HTTPRoute CRD is watched by name: when it is Established and
 * serves v1, the Gateway API lists start and a build follows, so installing the Gateway API on a
 * running cluster needs no restart. Only the lists live here; turning them into routes is
 * cluster-state.ts's pure work.
 *
 * A Gateway API list that fails to list (its CRD missing in a partial install, 404; RBAC refusing
 * it, 403) does not hold the others back: it counts as what it last listed (nothing, until it
 * lists once) with a warning, and keeps being retried (FollowedList); once it lists, its objects
 * count and a build follows. Otherwise a missing Gateway CRD would freeze every Ingress change.
 * Any other failure (a timeout, 429, 503) is waited out: building without HTTPRoutes that merely
 * failed to list would take every Gateway route down, and drop their hosts' recorded owners.
 */
export class RouteLists {
  private lists: Lists | undefined;
  /** Watches the HTTPRoute CRD while the Gateway API is not installed. */
  private crdWatch: FollowedList<KubernetesObject> | undefined;
  private gatewayStarting = false;
  /** The Gateway API lists last warned of as unreadable (what and why), so each is said once. */
  private warnedUnreadable = '';

  constructor(private readonly options: RouteListsOptions) {}

  /** Checks for the Gateway API, then lists and watches every collection. */
  async start(): Promise<void> {
    const { kubeConfig, logger } = this.options;
    const networking = kubeConfig.makeApiClient(NetworkingV1Api);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const gateway = await gatewayApiInstalled(custom);
    this.lists = {
      ingressClasses: this.follow('/apis/networking.k8s.io/v1/ingressclasses', 'IngressClasses', () =>
        networking.listIngressClass(),
      ),
      ingresses: this.follow('/apis/networking.k8s.io/v1/ingresses', 'Ingresses', () =>
        networking.listIngressForAllNamespaces(),
      ),
      services: this.follow('/api/v1/services', 'Services', () => core.listServiceForAllNamespaces()),
      endpointSlices: this.follow('/apis/discovery.k8s.io/v1/endpointslices', 'EndpointSlices', () =>
        discovery.listEndpointSliceForAllNamespaces(),
      ),
      ...(gateway ? this.gatewayLists(custom) : emptyGatewayLists()),
    };
    if (!gateway) {
      logger.info(
        { group: GATEWAY_GROUP, version: GATEWAY_VERSION, crd: HTTPROUTE_CRD },
        'the Gateway API CRDs are not installed: routes come from Ingress only until they are (watching for them)',
      );
      this.crdWatch = this.watchGatewayCrd(custom);
    }
    await Promise.all([...Object.values(this.lists).map((list) => list?.start()), this.crdWatch?.start()]);
  }

  /**
   * Whether every collection has been listed, so `objects()` is the cluster rather than a part of
   * it; a Gateway API list the API server answered 404 or 403 counts as listed (see the class comment).
   */
  synced(): boolean {
    if (this.lists === undefined) return false;
    const unreadable: { what: string; error: string }[] = [];
    for (const [key, list] of Object.entries(this.lists) as [
      string,
      FollowedList<KubernetesObject> | undefined,
    ][]) {
      if (list === undefined || list.synced()) continue;
      // Only an API server that says the collection is not there (404) or not ours to read (403)
      // lets the build go on without it; any other failure (a timeout, 429, 503) waits for the
      // retry, so a replica never builds without HTTPRoutes that merely failed to list.
      const absent = GATEWAY_KEYS.includes(key) && ABSENT_STATUSES.has(list.errorStatus() ?? 0);
      const error = absent ? list.error() : undefined;
      if (error === undefined) return false;
      unreadable.push({ what: key, error });
    }
    this.warnUnreadable(unreadable);
    return true;
  }

  /** The collections as last seen (empty Gateway API lists when it is not installed). */
  objects(): RouteObjects {
    const lists = this.lists;
    const of = (key: keyof RouteObjects): never[] => (lists?.[key]?.objects() ?? []) as never[];
    return {
      ingressClasses: of('ingressClasses'),
      ingresses: of('ingresses'),
      services: of('services'),
      endpointSlices: of('endpointSlices'),
      gatewayClasses: of('gatewayClasses'),
      gateways: of('gateways'),
      httpRoutes: of('httpRoutes'),
    };
  }

  async stop(): Promise<void> {
    const lists = this.lists;
    const crdWatch = this.crdWatch;
    this.lists = undefined;
    this.crdWatch = undefined;
    await crdWatch?.stop();
    if (lists !== undefined) await Promise.all(Object.values(lists).map((list) => list?.stop()));
  }

  /** Warns once of each Gateway API list that cannot be listed (and when that changes). */
  private warnUnreadable(unreadable: readonly { what: string; error: string }[]): void {
    const text = JSON.stringify(unreadable);
    if (text === this.warnedUnreadable) return;
    this.warnedUnreadable = text;
    if (unreadable.length === 0) return;
    this.options.logger.warn(
      { lists: unreadable.map(({ what, error }) => `${what}: ${error}`) },
      'some Gateway API collections cannot be listed: routes are built without them until they can be (retrying)',
    );
  }

  /** The Gateway API's three collections (GatewayClasses cluster-wide, the others in every namespace). */
  private gatewayLists(custom: CustomObjectsApi): Record<GatewayKey, FollowedList<KubernetesObject>> {
    const list = (plural: string, namespaced: boolean): FollowedList<KubernetesObject> =>
      this.follow(
        `/apis/${GATEWAY_GROUP}/${GATEWAY_VERSION}/${plural}`,
        plural,
        (namespaced
          ? () =>
              custom.listCustomObjectForAllNamespaces({
                group: GATEWAY_GROUP,
                version: GATEWAY_VERSION,
                plural,
              })
          : () =>
              custom.listClusterCustomObject({
                group: GATEWAY_GROUP,
                version: GATEWAY_VERSION,
                plural,
              })) as ListPromise<KubernetesObject>,
      );
    return {
      gatewayClasses: list('gatewayclasses', false),
      gateways: list('gateways', true),
      httpRoutes: list('httproutes', true),
    };
  }

  /**
   * Follows the HTTPRoute CRD by name (RBAC grants list and watch on that one name only) and starts
   * the Gateway API lists once it is Established and serves v1.
   */
  private watchGatewayCrd(custom: CustomObjectsApi): FollowedList<KubernetesObject> {
    const { kubeConfig, logger } = this.options;
    const apiextensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
    const fieldSelector = `metadata.name=${HTTPROUTE_CRD}`;
    const watch: FollowedList<KubernetesObject> = new FollowedList<KubernetesObject>({
      kubeConfig,
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      fieldSelector,
      list: (() =>
        apiextensions.listCustomResourceDefinition({ fieldSelector })) as ListPromise<KubernetesObject>,
      what: `CustomResourceDefinition ${HTTPROUTE_CRD}`,
      onChange: () => {
        if (this.gatewayStarting || this.lists === undefined) return;
        if (!watch.objects().some((crd) => servesV1(crd as CrdObject))) return;
        this.gatewayStarting = true;
        logger.info(
          { crd: HTTPROUTE_CRD },
          'the Gateway API CRDs are installed: reading GatewayClasses, Gateways and HTTPRoutes',
        );
        const lists = this.gatewayLists(custom);
        this.lists = { ...this.lists, ...lists };
        this.crdWatch = undefined;
        void watch.stop();
        void Promise.all(Object.values(lists).map((list) => list.start())).then(() =>
          this.options.onChange(),
        );
      },
      logger,
      ...(this.options.resyncMs === undefined ? {} : { resyncMs: this.options.resyncMs }),
    });
    return watch;
  }

  private follow(
    path: string,
    what: string,
    list: ListPromise<KubernetesObject>,
  ): FollowedList<KubernetesObject> {
    const { kubeConfig, logger, onChange, resyncMs } = this.options;
    return new FollowedList<KubernetesObject>({
      kubeConfig,
      path,
      list,
      what,
      onChange,
      logger,
      ...(resyncMs === undefined ? {} : { resyncMs }),
    });
  }
}

function emptyGatewayLists(): Record<GatewayKey, undefined> {
  return { gatewayClasses: undefined, gateways: undefined, httpRoutes: undefined };
}

/** Whether a CRD is Established and serves version v1. */
function servesV1(crd: CrdObject): boolean {
  const established = (crd.status?.conditions ?? []).some(
    (condition) => condition.type === 'Established' && condition.status === 'True',
  );
  return (
    established &&
    (crd.spec?.versions ?? []).some((version) => version.name === GATEWAY_VERSION && version.served === true)
  );
}

/**
 * Whether the Gateway API's HTTPRoute collection is served: a 404 means its CRDs are not
 * installed; any other failure is left to the lists to report and retry, so it counts as installed.
 */
async function gatewayApiInstalled(custom: CustomObjectsApi): Promise<boolean> {
  try {
    await custom.listCustomObjectForAllNamespaces({
      group: GATEWAY_GROUP,
      version: GATEWAY_VERSION,
      plural: 'httproutes',
      limit: 1,
    });
    return true;
  } catch (err) {
    return apiStatusCode(err) !== 404;
  }
}
