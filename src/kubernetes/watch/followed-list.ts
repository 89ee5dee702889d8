import {
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
} from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import { apiStatusCode, describeKubeError } from './kube-errors.js';

/** What one FollowedList watches. */
export interface FollowedListOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  /** The API path of the collection (`/api/v1/namespaces/ns/secrets`). */
  readonly path: string;
  /** Lists the collection with the same selector (the informer's initial list and relists). */
  readonly list: ListPromise<T>;
  readonly fieldSelector?: string;
  /** What it watches, for log lines (`Secret ns/name`). */
  readonly what: string;
  /** Called after every change the watch delivers, and at every resync. */
  readonly onChange: () => void;
  readonly logger: Logger;
  /** Re-evaluate the state every so often even with no event (ms; default 10 minutes). */
  readonly resyncMs?: number;
  /** Backoff after a failed list or watch: from `minMs`, doubling, at most `maxMs`. */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
}

/**
 * One list-and-watch (client-node's ListWatch informer) that keeps going: the informer relists by
 * itself when a watch ends with 410 Gone (its resourceVersion expired) and re-watches when the
 * server closes a watch; after an error (the API server unreachable, a refused list) it stops, so
 * this restarts it after a capped exponential backoff, reset once a list succeeds. A resync timer
 * calls `onChange` now and then, so a state the watcher acted on is re-checked even if an event
 * was lost. `objects()` is the informer's cache.
 */
export class FollowedList<T extends KubernetesObject> {
  private readonly informer: ListWatch<T>;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private resync: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError: string | undefined;
  private lastStatus: number | undefined;

  constructor(private readonly options: FollowedListOptions<T>) {
    this.informer = new ListWatch<T>(
      options.path,
      new Watch(options.kubeConfig),
      options.list,
      false,
      undefined,
      options.fieldSelector,
    );
    for (const verb of ['add', 'update', 'delete'] as const) this.informer.on(verb, () => options.onChange());
    this.informer.on('error', (err: unknown) => this.failed(err));
  }

  /** Lists, then watches; settles once the first list is done or has failed (see `synced`). */
  async start(): Promise<void> {
    this.resync = setInterval(() => this.options.onChange(), this.options.resyncMs ?? 600_000);
    this.resync.unref();
    await this.informer.start();
    if (this.synced()) this.failures = 0;
  }

  /** Whether a list has succeeded, so `objects()` is the collection rather than nothing known yet. */
  synced(): boolean {
    return this.informer.latestResourceVersion() !== '';
  }

  /** Why the last list or watch failed (undefined once one succeeded after it). */
  error(): string | undefined {
    return this.synced() ? undefined : this.lastError;
  }

  /** The HTTP status the API server answered the last failed list or watch with, while not synced. */
  errorStatus(): number | undefined {
    return this.synced() ? undefined : this.lastStatus;
  }

  objects(): readonly T[] {
    return this.informer.list();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearInterval(this.resync);
    await this.informer.stop();
  }

  private failed(err: unknown): void {
    if (this.stopped) return;
    this.lastError = describeKubeError(err);
    this.lastStatus = apiStatusCode(err);
    const { minMs, maxMs } = this.options.backoff ?? { minMs: 500, maxMs: 30_000 };
    const delay = Math.min(maxMs, minMs * 2 ** this.failures);
    this.failures += 1;
    this.options.logger.warn(
      { watching: this.options.what, error: this.lastError, retryInMs: delay },
      `watching ${this.options.what} failed; retrying`,
    );
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      if (this.stopped) return;
      void this.informer.start().then(() => {
        if (!this.synced()) return;
        this.failures = 0;
        this.options.onChange();
      });
    }, delay);
    this.retry.unref();
  }
}
