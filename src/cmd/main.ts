import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { PortcullisError, ValidationError, errorMessage, formatProblem } from '../shared/errors.js';
import { normaliseArgv } from './argv.js';
import { loginCommand, tcpCommand } from '../cli/commands.js';
import { versionString } from './version.js';

/**
 * The `portcullis` command line. Each command loads its modules when it runs (dynamic `import`), so
 * `--version` and `--help` never load gRPC, protobuf or the config pipeline. `portcullis --config f` runs all-in-one (ADS server plus a
 * supervised Envoy); `compile` prints the xDS resources as YAML (dry run); `validate` checks a
 * config; `config migrate` rewrites removed options. Errors are printed as messages with their key paths, never as stack traces.
 */
async function main(): Promise<void> {
  await yargs(normaliseArgv(hideBin(process.argv)))
    .scriptName('portcullis')
    .version(versionString())
    .option('config', {
      alias: 'c',
      type: 'string',
      describe: 'config file (.yaml, .json, .toml or .properties)',
    })
    .command('compile', 'print the xDS resources compiled from the config (dry run)', {}, async (args) => {
      const { runCompile } = await import('./compile-command.js');
      process.exitCode = await runCompile(
        requireConfig(args.config as string | undefined),
        process.stdout,
        process.stderr,
      );
    })
    .command('validate', 'check a config file and list every problem', {}, async (args) => {
      const { runValidate } = await import('./compile-command.js');
      process.exitCode = await runValidate(
        requireConfig(args.config as string | undefined),
        process.stdout,
        process.stderr,
      );
    })
    .command(
      'grpc-credential',
      'print the credential a sidecar Envoy presents to Portcullis (derived from shared_secret; secret)',
      {},
      async (args) => {
        const { runGrpcCredential } = await import('./grpc-credential-command.js');
        process.exitCode = runGrpcCredential(
          requireConfig(args.config as string | undefined),
          process.env,
          process.stdout,
          process.stderr,
        );
      },
    )
    .command(
      'internal-ca',
      'print the CA certificate tls_derive derives from shared_secret (PEM), for a sidecar Envoy to trust',
      {},
      async (args) => {
        const { runInternalCa } = await import('./internal-ca-command.js');
        process.exitCode = await runInternalCa(
          requireConfig(args.config as string | undefined),
          process.env,
          process.stdout,
          process.stderr,
        );
      },
    )
    .command('config', 'config file tools', (y) =>
      y
        .command(
          'migrate',
          "rewrite removed and renamed options into today's form and list the changes",
          (m) =>
            m.option('write', {
              type: 'boolean',
              default: false,
              describe: 'rewrite the file in place (keeps <file>.bak)',
            }),
          async (args) => {
            const { runMigrate } = await import('./config-command.js');
            process.exitCode = runMigrate(
              requireConfig(args.config as string | undefined),
              { write: args.write },
              process.stdout,
              process.stderr,
            );
          },
        )
        .demandCommand(1, 'name a config subcommand: migrate'),
    )
    .command(
      'kubernetes',
      'run Portcullis from the cluster: settings from the Portcullis object `global` (CRD portcullises.portcullis.dev, deploy/kubernetes/crd.yaml) and the Secrets it names, status written back (routes from Ingress: coming; the route list is empty for now)',
      (y) =>
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
          .option('ads', {
            choices: ['delta', 'sotw'] as const,
            default: 'delta' as const,
            describe: 'xDS transport for Envoy',
          })
          .option('without-envoy', {
            type: 'boolean',
            default: false,
            describe: 'serve ADS only (sidecar Envoy)',
          }),
      async (args) => {
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
        await runKubernetesCommand({
          ...(args.kubeconfig === undefined ? {} : { kubeconfig: args.kubeconfig }),
          ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
          leaseName: args['lease-name'],
          leaseSeconds,
          ads: args.ads,
          withoutEnvoy: args['without-envoy'],
        });
      },
    )
    .command(loginCommand)
    .command(tcpCommand)
    .command(
      '$0',
      'run Portcullis all-in-one: the ADS server and a supervised Envoy',
      (y) =>
        y
          .option('ads', {
            choices: ['delta', 'sotw'] as const,
            default: 'delta' as const,
            describe: 'xDS transport for Envoy',
          })
          .option('without-envoy', {
            type: 'boolean',
            default: false,
            describe: 'serve ADS only (sidecar Envoy)',
          }),
      async (args) => {
        await run(requireConfig(args.config), args.ads, args['without-envoy']);
      },
    )
    .strict()
    .fail((message, err) => {
      if (err !== undefined && err !== null) throw err;
      process.stderr.write(`portcullis: ${message}\nRun portcullis --help for usage.\n`);
      process.exit(2);
    })
    .parseAsync();
}

function requireConfig(config: string | undefined): string {
  if (config === undefined || config === '') {
    throw new PortcullisError(
      'CONFIG_MISSING',
      'no config file given: use --config <file> (or -config <file>)',
    );
  }
  return config;
}

async function run(configPath: string, ads: 'delta' | 'sotw', withoutEnvoy: boolean): Promise<void> {
  const { createLogger, terminalDestination } = await import('../shared/logger.js');
  const { startServices } = await import('./start.js');
  const { announceReady } = await import('./announce.js');
  // A person at a terminal reads lines; a service manager or collector gets JSON.
  const logger = createLogger('info', process.stdout.isTTY ? await terminalDestination() : undefined);
  const running = await startServices({
    configPath,
    env: process.env,
    logger,
    adsApiType: ads === 'delta' ? 'DELTA_GRPC' : 'GRPC',
    withoutEnvoy,
  });
  const log = running.log;
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, running.parts.proxy ? 'shutting down: draining Envoy' : 'shutting down');
    running.stop({ graceMs: 5000 }).then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ error: errorMessage(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => void running.reloader.reloadInBackground());
  await announceReady(running, log);
}

/** `portcullis kubernetes` (see runKubernetes): runs until SIGTERM or SIGINT. */
async function runKubernetesCommand(options: {
  kubeconfig?: string;
  namespace?: string;
  leaseName: string;
  leaseSeconds: number;
  ads: 'delta' | 'sotw';
  withoutEnvoy: boolean;
}): Promise<void> {
  const { createLogger, terminalDestination } = await import('../shared/logger.js');
  const { runKubernetes } = await import('./kubernetes-command.js');
  const logger = createLogger('info', process.stdout.isTTY ? await terminalDestination() : undefined);
  const fatal = (err: unknown): void => {
    process.stderr.write(`portcullis: ${err instanceof Error ? err.message : errorMessage(err)}\n`);
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
  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.stop({ graceMs: 5000 }).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ error: errorMessage(err) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => void running.running()?.reloader.reloadInBackground());
}

main().catch((err: unknown) => {
  if (err instanceof ValidationError) {
    process.stderr.write(`portcullis: ${err.message.split('\n')[0]}\n`);
    for (const problem of err.problems) process.stderr.write(`  - ${formatProblem(problem)}\n`);
  } else if (err instanceof PortcullisError) {
    process.stderr.write(`portcullis: ${err.message}\n`);
  } else {
    process.stderr.write(`portcullis: unexpected error: ${errorMessage(err)}\n`);
  }
  process.exit(1);
});
