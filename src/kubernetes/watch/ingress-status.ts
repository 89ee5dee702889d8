import { isIP } from 'node:net';
import type { NetworkingV1Api } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import { classFilter } from '../ingress-routes.js';
import type { Ingress, IngressClass } from '../objects.js';
import { describeKubeError } from './kube-errors.js';

/** What IngressStatus needs. */
export interface IngressStatusOptions {
  readonly networking: NetworkingV1Api;
  /** The address Portcullis serves on: an IP, or a host name. */
  readonly address: string;
  /** This replica: the field manager of its status writes. */
  readonly identity: string;
  readonly logger: Logger;
}

/** `status.loadBalancer.ingress` naming `address` (an IP as `ip`, else as `hostname`). */
export function loadBalancerStatus(address: string): { loadBalancer: { ingress: Record<string, string>[] } } {
  return { loadBalancer: { ingress: [isIP(address) === 0 ? { hostname: address } : { ip: address }] } };
}

/**
 * Writes the address Portcullis serves on into `status.loadBalancer.ingress` of every Ingress of
 * our IngressClasses, so `kubectl get ingress` and tools like external-dns see where it is served.
 * Only an Ingress whose status differs is written (each write is itself a change every replica
 * sees). Only the Lease holder calls it; failures are logged and retried at the next pass.
 */
export class IngressStatus {
  constructor(private readonly options: IngressStatusOptions) {}

  async write(classes: readonly IngressClass[], ingresses: readonly Ingress[]): Promise<void> {
    const ours = classFilter(classes);
    const wanted = loadBalancerStatus(this.options.address);
    const text = JSON.stringify(wanted.loadBalancer.ingress);
    for (const ingress of ingresses) {
      if (!ours(ingress)) continue;
      const current = (ingress as { status?: { loadBalancer?: { ingress?: unknown } } }).status?.loadBalancer
        ?.ingress;
      if (JSON.stringify(current ?? []) === text) continue;
      const { name, namespace = '' } = ingress.metadata;
      try {
        await this.options.networking.patchNamespacedIngressStatus({
          name,
          namespace,
          body: [{ op: 'add', path: '/status', value: wanted }],
          fieldManager: `portcullis/${this.options.identity}`.slice(0, 128),
        });
      } catch (err) {
        this.options.logger.warn(
          { object: `Ingress ${namespace}/${name}`, error: describeKubeError(err) },
          'could not write the Ingress status',
        );
      }
    }
  }
}
