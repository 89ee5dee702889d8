import type { CoreV1Api, KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import type { SecretObject } from '../cluster-state.js';
import { secretText, type SecretName } from '../secret-refs.js';
import { FollowedList } from './followed-list.js';

/** What SecretWatch needs. */
export interface SecretWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Api;
  readonly logger: Logger;
  /** Called when a followed Secret changes (or at a resync). */
  readonly onChange: () => void;
  readonly resyncMs?: number;
}

/**
 * Follows exactly the Secrets the settings name: one list-and-watch per Secret, in its namespace,
 * narrowed by a field selector to its name, so Portcullis never lists or watches any other Secret
 * (and RBAC may grant it only those). `follow` starts the new ones and stops those no longer
 * named. Values stay in the informers' caches; nothing here logs them.
 */
export class SecretWatch {
  private readonly followed = new Map<string, FollowedList<V1Secret>>();

  constructor(private readonly options: SecretWatchOptions) {}

  /** Follows `names` (and only them); settles once each new one has been listed (or failed to). */
  async follow(names: readonly SecretName[]): Promise<void> {
    const wanted = new Map(names.map((name) => [secretText(name), name]));
    for (const [key, list] of this.followed) {
      if (wanted.has(key)) continue;
      this.followed.delete(key);
      await list.stop();
    }
    const started: Promise<void>[] = [];
    for (const [key, name] of wanted) {
      if (this.followed.has(key)) continue;
      const list = this.watchOne(name);
      this.followed.set(key, list);
      started.push(list.start());
    }
    await Promise.all(started);
  }

  /**
   * The followed Secrets by `ns/name`: the object, or undefined when it does not exist. Secrets
   * not yet listed (the API server unreachable) are in `unknown` instead, with the reason, so a
   * Secret that could not be read is never taken for a missing one.
   */
  current(): { readonly secrets: Map<string, SecretObject | undefined>; readonly unknown: string[] } {
    const secrets = new Map<string, SecretObject | undefined>();
    const unknown: string[] = [];
    for (const [key, list] of this.followed) {
      if (!list.synced()) {
        unknown.push(`Secret ${key} could not be read: ${list.error() ?? 'not listed yet'}`);
        continue;
      }
      secrets.set(key, list.objects()[0] as SecretObject | undefined);
    }
    return { secrets, unknown };
  }

  async stop(): Promise<void> {
    const lists = [...this.followed.values()];
    this.followed.clear();
    await Promise.all(lists.map((list) => list.stop()));
  }

  private watchOne(name: SecretName): FollowedList<V1Secret> {
    const fieldSelector = `metadata.name=${name.name}`;
    const { core, kubeConfig, logger, onChange, resyncMs } = this.options;
    return new FollowedList<V1Secret>({
      kubeConfig,
      path: `/api/v1/namespaces/${encodeURIComponent(name.namespace)}/secrets`,
      list: () => core.listNamespacedSecret({ namespace: name.namespace, fieldSelector }),
      fieldSelector,
      what: `Secret ${secretText(name)}`,
      onChange,
      logger,
      ...(resyncMs === undefined ? {} : { resyncMs }),
    });
  }
}
