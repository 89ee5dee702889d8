import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { PortcullisError, ValidationError, errorMessage, formatProblem } from '../shared/errors.js';
import { normaliseArgv } from './argv.js';
import { loginCommand, tcpCommand } from '../cli/commands.js';
import { versionString } from './version.js';
import { kubernetesCommand, SERVING_OPTIONS } from './kubernetes-cli.js';

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
    .command(kubernetesCommand)
    .command(loginCommand)
    .command(tcpCommand)
    .command(
      '$0',
      'run Portcullis all-in-one: the ADS server and a supervised Envoy',
      (y) => y.options(SERVING_OPTIONS),
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
  const { handleSignals } = await import('./signals.js');
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
  handleSignals(log, {
    stopping: running.parts.proxy ? 'shutting down: draining Envoy' : 'shutting down',
    stop: (graceMs) => running.stop({ graceMs }),
    reload: () => void running.reloader.reloadInBackground(),
  });
  await announceReady(running, log);
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
