import { CoordinationV1Api } from '@kubernetes/client-node';
import { errorMessage, ValidationError } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import type { AdsApiType } from '../envoy/bootstrap.js';
import { SETTINGS_CRD_NAME, SETTINGS_OBJECT_TEXT } from '../kubernetes/cluster-state.js';
import { SETTINGS_KIND, SETTINGS_OBJECT_NAME } from '../kubernetes/crd-schema.js';
import {
  checkSettingsApi,
  loadKubeConfig,
  ownNamespace,
  replicaIdentity,
} from '../kubernetes/watch/connect.js';
import { LeaseElector } from '../kubernetes/watch/lease-elector.js';
import {
  SettingsSource,
  type BuildOutcome,
  type SourceDocument,
} from '../kubernetes/watch/settings-source.js';
import {
  startWaitingMetricsServer,
  type WaitingMetricsServer,
} from '../observability/metrics/metrics-server.js';
import { splitHostPort } from '../shared/address.js';
import { startServices, type Running } from './start.js';
import { announceReady } from './announce.js';

/** Options of `portcullis kubernetes`. */
export interface KubernetesOptions {
  readonly kubeconfig?: string;
  readonly namespace?: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger & { level?: string };
  readonly adsApiType?: AdsApiType;
  readonly withoutEnvoy?: boolean;
  /** The Lease that picks the replica writing status (in `namespace`). */
  readonly leaseName?: string;
  readonly leaseSeconds?: number;
  /** The address written to Ingress status (default: the POD_IP environment variable). */
  readonly publishAddress?: string;
  /** A failure after start that leaves nothing to serve (the services could not start). */
  readonly onFatal: (err: unknown) => void;
}

/** A running `portcullis kubernetes`: the source, the Lease, and the services once started. */
export interface KubernetesRunning {
  readonly source: SettingsSource;
  readonly elector: LeaseElector;
  /** The services, once a first valid settings object started them. */
  running(): Running | undefined;
  stop(options?: { graceMs?: number }): Promise<void>;
}

/** How the settings resource is named as the reload loop's config source (logs, errors). */
export const KUBERNETES_SOURCE = `kubernetes: ${SETTINGS_OBJECT_TEXT}`;

/**
 * `portcullis kubernetes`: checks the API server and the CRD (a clear error and a non-zero exit
 * when either is missing), joins the status Lease, and runs the settings resource as the config
 * source. The first valid settings start the same services `portcullis --config` starts (the
 * supervised Envoy, or a sidecar's ADS); every later change is a reload of the running loop.
 * Invalid settings at start are reported in status and waited out, not fatal: nothing serves
 * until a valid object arrives. Routes come from Ingresses of our IngressClasses and, when the
 * Gateway API is installed, HTTPRoutes (SettingsSource); the Lease holder writes the address
 * Portcullis serves on (`publishAddress`, else POD_IP) into their status.
 * With METRICS_ADDRESS set, its health endpoints listen there from start, before any settings
 * (a pod waiting for its object stays alive but not ready; see startWaitingMetricsServer), and
 * the services serve metrics there once they start.
 */
export async function runKubernetes(options: KubernetesOptions): Promise<KubernetesRunning> {
  const { env, logger } = options;
  const earlyMetrics = await startHealth(env, logger);
  try {
    return await runWithHealth(options, earlyMetrics);
  } catch (err) {
    await earlyMetrics?.close();
    throw err;
  }
}

/** What `/readyz` says until a valid settings object started the services. */
export const WAITING_FOR_SETTINGS = `waiting for a valid ${SETTINGS_KIND} object '${SETTINGS_OBJECT_NAME}'`;

/** The health endpoints on METRICS_ADDRESS while the settings are awaited (undefined when unset). */
async function startHealth(
  env: KubernetesOptions['env'],
  logger: Logger,
): Promise<WaitingMetricsServer | undefined> {
  const address = nonEmpty(env['METRICS_ADDRESS']);
  if (address === undefined) return undefined;
  const { host, port } = splitHostPort(address);
  const server = await startWaitingMetricsServer({ host, port, waitingFor: WAITING_FOR_SETTINGS });
  logger.info(
    { metrics_address: address, port: server.port },
    `health listening on METRICS_ADDRESS before the settings: /healthz answers 200, /readyz 503 until a valid ${SETTINGS_OBJECT_TEXT}`,
  );
  return server;
}

async function runWithHealth(
  options: KubernetesOptions,
  earlyMetrics: WaitingMetricsServer | undefined,
): Promise<KubernetesRunning> {
  const { env, logger } = options;
  const kubeConfig = loadKubeConfig(options.kubeconfig, env);
  await checkSettingsApi(kubeConfig);
  const namespace = ownNamespace(options.namespace);
  const identity = replicaIdentity(env);
  const leaseName = options.leaseName ?? 'portcullis-status';
  const publishAddress = options.publishAddress ?? nonEmpty(env['POD_IP']);
  let running: Running | undefined;
  let stopped = false;
  const apply = async (pushed: SourceDocument): Promise<BuildOutcome> => {
    if (running !== undefined) {
      const result = await running.reloader.pushDocument(pushed);
      if (result === undefined)
        return { ok: false, problems: [{ path: '', message: 'Portcullis is stopping' }] };
      return result.ok ? { ok: true, problems: [] } : { ok: false, problems: result.problems };
    }
    try {
      running = await startServices({
        configPath: KUBERNETES_SOURCE,
        document: pushed,
        env,
        logger,
        ...(options.adsApiType === undefined ? {} : { adsApiType: options.adsApiType }),
        ...(options.withoutEnvoy === undefined ? {} : { withoutEnvoy: options.withoutEnvoy }),
        ...(earlyMetrics === undefined ? {} : { earlyMetrics }),
      });
    } catch (err) {
      if (err instanceof ValidationError) return { ok: false, problems: err.problems };
      if (!stopped) options.onFatal(err);
      return {
        ok: false,
        problems: [{ path: '', message: `Portcullis could not start: ${errorMessage(err)}` }],
      };
    }
    if (stopped) await running.stop();
    else void announceReady(running, running.log);
    return { ok: true, problems: [] };
  };
  // The source and the elector refer to each other through two callbacks, called once both exist.
  const source = new SettingsSource({
    kubeConfig,
    namespace,
    env,
    identity,
    logger,
    apply,
    isLeader: () => elector.isLeader(),
    ...(publishAddress === undefined ? {} : { publishAddress }),
  });
  const elector = new LeaseElector({
    api: kubeConfig.makeApiClient(CoordinationV1Api),
    namespace,
    name: leaseName,
    identity,
    leaseSeconds: options.leaseSeconds ?? 15,
    logger,
    onChange: (leading) => source.leadershipChanged(leading),
  });
  logger.info(
    {
      server: kubeConfig.getCurrentCluster()?.server,
      crd: SETTINGS_CRD_NAME,
      namespace,
      lease: `${namespace}/${leaseName}`,
      identity,
      publishAddress:
        publishAddress ??
        '(none: Ingress status and Gateway addresses are not written; set --publish-address or POD_IP)',
    },
    `watching ${SETTINGS_OBJECT_TEXT} (${SETTINGS_CRD_NAME}) and the Secrets it names, Ingresses of our IngressClasses, their Services and EndpointSlices`,
  );
  const stop = async (stopOptions: { graceMs?: number } = {}): Promise<void> => {
    stopped = true;
    await source.stop();
    await elector.stop();
    await running?.stop(stopOptions);
    await earlyMetrics?.close();
  };
  try {
    await elector.start();
    await source.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { source, elector, running: () => running, stop };
}

/** `value` unless it is missing or empty (an unset fieldRef gives an empty variable). */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
