import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import { canonicalJson } from '../../shared/canonical-json.js';
import type { RouteObjects } from '../cluster-state.js';
import { GATEWAY_API_GROUP } from '../gateway-attachment.js';
import { gatewayApiStatusWrites, type StatusWrite } from '../gateway-status.js';
import { describeObject, type ObjectProblem } from '../object-problems.js';
import { describeKubeError } from './kube-errors.js';

/** What GatewayStatusWriter needs. */
export interface GatewayStatusWriterOptions {
  readonly custom: CustomObjectsApi;
  /** Where Portcullis is reached, for Gateways' `status.addresses` (undefined: none written). */
  readonly address: string | undefined;
  /** This replica: the field manager of its status writes. */
  readonly identity: string;
  readonly logger: Logger;
}

const GATEWAY_API_VERSION = 'v1';

/**
 * Writes the Gateway API status of GatewayClasses, Gateways and HTTPRoutes (gateway-status.ts)
 * through their status subresource, field manager `portcullis/<identity>`. Only what differs from
 * the listed object is written, and each patch first tests the resourceVersion it was computed
 * from, so a status is never written over a newer object (another controller's parents entries
 * of an HTTPRoute included): a refused test waits for the watch to deliver that object and the
 * next pass. Only the Lease holder calls it; failures are logged and retried at the next pass.
 */
export class GatewayStatusWriter {
  /** The status last written per object (uid), with the version it was computed from. */
  private written = new Map<string, { readonly from: string; readonly text: string }>();

  constructor(private readonly options: GatewayStatusWriterOptions) {}

  async write(
    objects: RouteObjects,
    problems: readonly ObjectProblem[],
    skipped: readonly ObjectProblem[],
    serving: boolean,
  ): Promise<void> {
    const writes = gatewayApiStatusWrites({
      gatewayClasses: objects.gatewayClasses,
      gateways: objects.gateways,
      httpRoutes: objects.httpRoutes,
      problems,
      skipped,
      serving,
      address: this.options.address,
      now: new Date(),
    });
    const written = new Map<string, { readonly from: string; readonly text: string }>();
    for (const update of writes) {
      const key = update.uid ?? describeObject(update);
      const text = canonicalJson(update.status);
      const last = this.written.get(key);
      // Written already; the watch has not delivered the result yet.
      if (last !== undefined && last.from === update.resourceVersion && last.text === text) {
        written.set(key, last);
        continue;
      }
      if (await this.patch(update)) written.set(key, { from: update.resourceVersion ?? '', text });
    }
    this.written = written;
  }

  private async patch(update: StatusWrite): Promise<boolean> {
    const body = [
      ...(update.resourceVersion === undefined
        ? []
        : [{ op: 'test', path: '/metadata/resourceVersion', value: update.resourceVersion }]),
      { op: 'add', path: '/status', value: update.status },
    ];
    const common = {
      group: GATEWAY_API_GROUP,
      version: GATEWAY_API_VERSION,
      plural: update.plural,
      name: update.name,
      body,
      fieldManager: `portcullis/${this.options.identity}`.slice(0, 128),
    };
    try {
      if (update.namespace === undefined) await this.options.custom.patchClusterCustomObjectStatus(common);
      else
        await this.options.custom.patchNamespacedCustomObjectStatus({
          ...common,
          namespace: update.namespace,
        });
      return true;
    } catch (err) {
      this.options.logger.warn(
        { object: describeObject(update), error: describeKubeError(err) },
        `could not write the ${update.kind} status`,
      );
      return false;
    }
  }
}
