import type { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import { SETTINGS_GROUP, SETTINGS_KIND, SETTINGS_PLURAL, SETTINGS_VERSION } from '../crd-schema.js';
import type { SettingsObject } from '../cluster-state.js';
import { problemLines, sameStatus, settingsStatus, type SettingsVerdict } from '../settings-status.js';
import { describeKubeError } from './kube-errors.js';
import { createWarningEvent } from './warning-event.js';

/** What StatusWriter needs. */
export interface StatusWriterOptions {
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  /** This replica: the field manager of its status writes and the Events' reporting instance. */
  readonly identity: string;
  readonly logger: Logger;
}

/** Events about a cluster-scoped object live in `default` (the API server refuses other namespaces). */
const EVENT_NAMESPACE = 'default';

/**
 * Writes a build's outcome to the Portcullis object: its status through the status subresource
 * (settings-status.ts; skipped when unchanged, since each write is itself a change every replica
 * sees) with this replica as the field manager (`portcullis/<identity>`, so managedFields name the
 * writer), and a Warning Event for a refused generation. Failures are logged and not retried
 * here: the next outcome or resync writes again. Only the Lease holder calls it.
 */
export class StatusWriter {
  /** The last generation an Event was written for, so a resync does not repeat it. */
  private evented: string | undefined;

  constructor(private readonly options: StatusWriterOptions) {}

  async write(object: SettingsObject, verdict: SettingsVerdict): Promise<void> {
    const name = object.metadata?.name;
    if (name === undefined) return;
    const status = settingsStatus(verdict, object.status, new Date());
    try {
      if (!sameStatus(status, object.status)) {
        await this.options.custom.patchClusterCustomObjectStatus({
          group: SETTINGS_GROUP,
          version: SETTINGS_VERSION,
          plural: SETTINGS_PLURAL,
          name,
          body: [{ op: 'add', path: '/status', value: status }],
          fieldManager: `portcullis/${this.options.identity}`.slice(0, 128),
        });
      }
      const key = `${object.metadata?.uid ?? ''}/${verdict.generation ?? ''}/${verdict.problems.length}`;
      if (verdict.problems.length > 0 && this.evented !== key) {
        await this.event(object, verdict);
        this.evented = key;
      }
    } catch (err) {
      this.options.logger.warn(
        { object: name, error: describeKubeError(err) },
        'could not write the Portcullis object status',
      );
    }
  }

  private async event(object: SettingsObject, verdict: SettingsVerdict): Promise<void> {
    const { name, uid, resourceVersion } = object.metadata ?? {};
    await createWarningEvent(this.options.core, {
      namespace: EVENT_NAMESPACE,
      involvedObject: {
        apiVersion: `${SETTINGS_GROUP}/${SETTINGS_VERSION}`,
        kind: SETTINGS_KIND,
        ...(name === undefined ? {} : { name }),
        ...(uid === undefined ? {} : { uid }),
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
      },
      reason: 'InvalidSettings',
      message: `settings refused${verdict.serving ? ' (the last good settings keep serving)' : ''}: ${problemLines(verdict.problems).join('; ')}`,
      identity: this.options.identity,
    });
  }
}
