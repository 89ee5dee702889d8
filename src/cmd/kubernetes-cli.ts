import type { Argv, CommandModule } from 'yargs';
import { PortcullisError, errorMessage } from '../shared/errors.js';

/** The options of every command that serves: the xDS transport, and sidecar mode. */
export const SERVING_OPTIONS = {
  ads: {
    choices: ['delta', 'sotw'] as const,
    default: 'delta' as const,
    describe: 'xDS transport for Envoy',
  },
  'without-envoy': {
    type: 'boolean' as const,
    default: false,
    describe: 'serve ADS only (sidecar Envoy)',
  },
};

/** The flags of `portcullis kubernetes`. */
interface KubernetesFlags {
  readonly config: string | undefined;
  readonly kubeconfig: string | undefined;
  readonly namespace: string | undefined;
  readonly 'lease-name': string;
  readonly 'lease-seconds': number;
  readonly 'publish-address': string | undefined;
  readonly ads: 'delta' | 'sotw';
  readonly 'without-envoy': boolean;
}

/**
 * `portcullis kubernetes`: its flags, checked here, and the run (runKubernetes, loaded when the
 * command runs so `--help` never loads the Kubernetes client).
 */
export const kubernetesCommand: CommandModule<object, KubernetesFlags> = {
  command: 'kubernetes',
  describe:
    'run Portcullis from the cluster: settings from the Portcullis object `global` (CRD portcullises.portcullis.dev, deploy/kubernetes/crd.yaml) and the Secrets it names, status written back; routes from Ingresses of an IngressClass with controller portcullis.dev/ingress-controller (and HTTPRoutes when the Gateway API CRDs are installed), backends followed through EndpointSlices',
  builder: (y) =>
    y
      .option('kubeconfig', {
        type: 'string',
        describe: 'kubeconfig file (default: the pod service account, else KUBECONFIG or ~/.kube/config)',
      })
      .option('namespace', {
        type: 'string',
        describe:
          "namespace of Secrets named without one, and of the status Lease (default: the pod's namespace, else default)",
      })
      .option('lease-name', {
        type: 'string',
        default: 'portcullis-status',
        describe: 'the Lease whose holder (one replica) writes status and Events; every replica serves',
      })
      .option('lease-seconds', {
        type: 'number',
        default: 15,
        describe: 'how long the Lease holds without renewal before another replica takes over',
      })
      .option('publish-address', {
        type: 'string',
        describe:
          'the address (IP or host name) written to status.loadBalancer.ingress of our Ingresses (default: POD_IP; neither: not written)',
      })
      .options(SERVING_OPTIONS) as unknown as Argv<KubernetesFlags>,
  handler: async (args) => {
    if (args.config !== undefined) {
      throw new PortcullisError(
        'CONFIG_INVALID',
        '--config is not read by `portcullis kubernetes`: the settings come from the Portcullis object global (the environment still applies)',
      );
    }
    const leaseSeconds = args['lease-seconds'];
    if (!Number.isInteger(leaseSeconds) || leaseSeconds < 1) {
      throw new PortcullisError(
        'CONFIG_INVALID',
        '--lease-seconds must be a whole number of seconds, at least 1',
      );
    }
    if (args['publish-address']?.trim() === '') {
      throw new PortcullisError('CONFIG_INVALID', '--publish-address must be an IP address or a host name');
    }
    await runKubernetesCommand({
      ...(args.kubeconfig === undefined ? {} : { kubeconfig: args.kubeconfig }),
      ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
      leaseName: args['lease-name'],
      leaseSeconds,
      ...(args['publish-address'] === undefined ? {} : { publishAddress: args['publish-address'] }),
      ads: args.ads,
      withoutEnvoy: args['without-envoy'],
    });
  },
};

/** Runs `portcullis kubernetes` (see runKubernetes) until SIGTERM or SIGINT. */
async function runKubernetesCommand(options: {
  kubeconfig?: string;
  namespace?: string;
  leaseName: string;
  leaseSeconds: number;
  publishAddress?: string;
  ads: 'delta' | 'sotw';
  withoutEnvoy: boolean;
}): Promise<void> {
  const { createLogger, terminalDestination } = await import('../shared/logger.js');
  const { runKubernetes } = await import('./kubernetes-command.js');
  const { handleSignals } = await import('./signals.js');
  const logger = createLogger('info', process.stdout.isTTY ? await terminalDestination() : undefined);
  const fatal = (err: unknown): void => {
    process.stderr.write(`portcullis: ${errorMessage(err)}\n`);
    process.exit(1);
  };
  const { ads, withoutEnvoy, ...rest } = options;
  const running = await runKubernetes({
    ...rest,
    env: process.env,
    logger,
    adsApiType: ads === 'delta' ? 'DELTA_GRPC' : 'GRPC',
    withoutEnvoy,
    onFatal: fatal,
  });
  handleSignals(logger, {
    stopping: 'shutting down',
    stop: (graceMs) => running.stop({ graceMs }),
    reload: () => void running.running()?.reloader.reloadInBackground(),
  });
}
