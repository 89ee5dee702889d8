import {
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

type Lists = { readonly [K in keyof RouteObjects]: FollowedList<KubernetesObject> | undefined };

/**
 * The route source's collections, each one list-and-watch (FollowedList) across every namespace:
 * IngressClasses, Ingresses, Services and EndpointSlices always, and GatewayClasses, Gateways and
 * HTTPRoutes when the Gateway API CRDs are installed (checked once at start; without them the
 * Gateway API is left out, said in one log line, and Ingress works alone). Only the lists live
 * here; turning them into routes is cluster-state.ts's pure work.
 */
export class RouteLists {
  private lists: Lists | undefined;

  constructor(private readonly options: RouteListsOptions) {}

  /** Checks for the Gateway API, then lists and watches every collection. */
  async start(): Promise<void> {
    const { kubeConfig, logger } = this.options;
    const networking = kubeConfig.makeApiClient(NetworkingV1Api);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const gateway = await gatewayApiInstalled(custom);
    if (!gateway)
      logger.info(
        { group: GATEWAY_GROUP, version: GATEWAY_VERSION },
        'the Gateway API CRDs are not installed: routes come from Ingress only (install them and restart to read HTTPRoutes)',
      );
    const gatewayList = (plural: string, namespaced: boolean): FollowedList<KubernetesObject> | undefined =>
      gateway
        ? this.follow(
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
          )
        : undefined;
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
      gatewayClasses: gatewayList('gatewayclasses', false),
      gateways: gatewayList('gateways', true),
      httpRoutes: gatewayList('httproutes', true),
    };
    await Promise.all(Object.values(this.lists).map((list) => list?.start()));
  }

  /** Whether every collection has been listed, so `objects()` is the cluster rather than a part of it. */
  synced(): boolean {
    return this.lists !== undefined && Object.values(this.lists).every((list) => list?.synced() ?? true);
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
    this.lists = undefined;
    if (lists !== undefined) await Promise.all(Object.values(lists).map((list) => list?.stop()));
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
