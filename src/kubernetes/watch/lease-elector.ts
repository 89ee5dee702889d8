import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import { leaseAction, type Observed } from '../lease-decision.js';
import { apiStatusCode, describeKubeError } from './kube-errors.js';

/** What LeaseElector needs. */
export interface LeaseElectorOptions {
  readonly api: CoordinationV1Api;
  readonly namespace: string;
  /** The Lease's name (`portcullis-status`). */
  readonly name: string;
  /** This replica (the pod name, or host name and pid). */
  readonly identity: string;
  /** How long a hold lasts without renewal (s); renewed every third of it. */
  readonly leaseSeconds: number;
  readonly logger: Logger;
  /** Called when this replica becomes the holder (true) or stops being it (false). */
  readonly onChange: (leading: boolean) => void;
}

/**
 * Leader election over a coordination.k8s.io/v1 Lease, so that of several replicas (all serving)
 * only one writes status and Events. Every third of the lease duration it reads the Lease and
 * creates, renews or takes it over (lease-decision.ts), writing with the resourceVersion it read
 * so concurrent takeovers cannot both succeed. A holder that cannot renew for a whole lease
 * duration stops leading before another can take over; `stop` hands the Lease back at once.
 */
export class LeaseElector {
  private leading = false;
  private observed: Observed | undefined;
  private lastRenewed = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private tick: Promise<void> = Promise.resolve();

  constructor(private readonly options: LeaseElectorOptions) {}

  /** Tries once now, then keeps trying (see the class comment). */
  async start(): Promise<void> {
    await this.attempt();
    this.timer = setInterval(
      () => {
        this.tick = this.tick.then(() => this.attempt());
      },
      Math.max(200, (this.options.leaseSeconds * 1000) / 3),
    );
    this.timer.unref();
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Stops trying; a holder releases the Lease so another replica takes over without waiting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.tick;
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = await this.read();
      if (lease?.spec?.holderIdentity !== this.options.identity) return;
      await this.write(lease, { holderIdentity: '', leaseDurationSeconds: 1, renewTime: new V1MicroTime() });
    } catch (err) {
      this.options.logger.warn({ error: describeKubeError(err) }, 'could not release the status Lease');
    }
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    const { identity, leaseSeconds, logger } = this.options;
    try {
      const lease = await this.read();
      const decided = leaseAction(lease?.spec, identity, this.observed, performance.now());
      this.observed = decided.observed;
      const now = new V1MicroTime();
      const action = decided.action;
      if (action.kind === 'wait') {
        this.setLeading(false);
        return;
      }
      const hold = { holderIdentity: identity, leaseDurationSeconds: leaseSeconds, renewTime: now };
      if (action.kind === 'create') {
        await this.options.api.createNamespacedLease({
          namespace: this.options.namespace,
          body: {
            metadata: { name: this.options.name, namespace: this.options.namespace },
            spec: { ...hold, acquireTime: now, leaseTransitions: 0 },
          },
        });
      } else if (action.kind === 'renew') {
        await this.write(lease as V1Lease, hold);
      } else {
        const transitions = (lease?.spec?.leaseTransitions ?? 0) + 1;
        await this.write(lease as V1Lease, { ...hold, acquireTime: now, leaseTransitions: transitions });
        logger.info(
          { lease: this.options.name, from: action.from || undefined },
          'took over the status Lease',
        );
      }
      this.lastRenewed = performance.now();
      this.setLeading(true);
    } catch (err) {
      // A conflict means another replica wrote first: it holds the Lease now.
      if (apiStatusCode(err) !== 409)
        logger.warn({ error: describeKubeError(err) }, 'the status Lease could not be read or written');
      if (this.leading && performance.now() - this.lastRenewed >= (leaseSeconds * 1000 * 2) / 3) {
        this.setLeading(false);
      }
    }
  }

  private async read(): Promise<V1Lease | undefined> {
    try {
      return await this.options.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      });
    } catch (err) {
      if (apiStatusCode(err) === 404) return undefined;
      throw err;
    }
  }

  private async write(lease: V1Lease, spec: NonNullable<V1Lease['spec']>): Promise<void> {
    await this.options.api.replaceNamespacedLease({
      name: this.options.name,
      namespace: this.options.namespace,
      body: { ...lease, spec: { ...lease.spec, ...spec } },
    });
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.options.logger.info(
      { lease: `${this.options.namespace}/${this.options.name}`, identity: this.options.identity },
      leading ? 'holding the status Lease: this replica writes status' : 'not holding the status Lease',
    );
    this.options.onChange(leading);
  }
}
