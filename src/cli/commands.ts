/**
 * The client subcommands as yargs command modules, for src/cmd/main.ts: `login` and `tcp`. This
 * module loads nothing but yargs types; each handler imports the client (./run.js) when it runs,
 * as main.ts's other commands do. Handlers turn Ctrl-C (and SIGTERM) into an AbortSignal and exit
 * with the command's code once stdout is flushed (stdin may still be open in `tcp --listen -`).
 */
import type { Argv, CommandModule } from 'yargs';
import type { ClientIo } from './run.js';

interface ConnectionFlags {
  readonly via: string | undefined;
  readonly browser: boolean;
  readonly 'ca-cert': string | undefined;
  readonly 'insecure-skip-verify': boolean;
}

function connectionFlags<T>(y: Argv<T>): Argv<T & ConnectionFlags> {
  return y
    .option('via', {
      type: 'string',
      describe:
        'reach Portcullis at this https://host[:port] instead of the route host on 443 (a name is also the TLS and sign-in host; an IP address keeps the route host for those)',
    })
    .option('browser', {
      type: 'boolean',
      default: true,
      describe: 'open the sign-in URL in a browser (--no-browser prints it on stderr)',
    })
    .option('ca-cert', {
      type: 'string',
      describe: "PEM file with the CA that signed Portcullis's certificate",
    })
    .option('insecure-skip-verify', {
      type: 'boolean',
      default: false,
      describe: "do not check Portcullis's certificate (testing only)",
    }) as Argv<T & ConnectionFlags>;
  // Not .conflicts('ca-cert', ...): yargs counts the false default as given; run.ts refuses the pair.
}

function connectionArgs(args: ConnectionFlags): {
  via: string | undefined;
  browser: boolean;
  caCert: string | undefined;
  insecureSkipVerify: boolean;
} {
  return {
    via: args.via,
    browser: args.browser,
    caCert: args['ca-cert'],
    insecureSkipVerify: args['insecure-skip-verify'],
  };
}

/** `portcullis login --url https://app.example.com`: programmatic login, token cached per route host. */
export const loginCommand: CommandModule<object, ConnectionFlags & { readonly url: string }> = {
  command: 'login',
  describe: "sign in to a route in a browser and cache its token (in the user's config directory)",
  builder: (y) =>
    connectionFlags(y).option('url', {
      type: 'string',
      demandOption: true,
      describe: 'the route, https://host[:port]',
    }) as Argv<ConnectionFlags & { readonly url: string }>,
  handler: async (args) => {
    const { runLogin } = await import('./run.js');
    await withProcessIo((io) => runLogin({ ...connectionArgs(args), url: args.url }, io));
  },
};

/** `portcullis tcp db.example.com:5432 [--listen 127.0.0.1:15432 | --listen -]`: a TCP tunnel. */
export const tcpCommand: CommandModule<
  object,
  ConnectionFlags & {
    readonly target: string;
    readonly listen: string | undefined;
    readonly verbose: boolean;
  }
> = {
  command: 'tcp <target>',
  describe:
    'tunnel TCP to a route (host:port) through Portcullis: a local listener, or stdin/stdout with --listen -',
  builder: (y) =>
    connectionFlags(y)
      .positional('target', { type: 'string', demandOption: true, describe: "the route's host:port" })
      .option('listen', {
        type: 'string',
        // One argument, taken as is: yargs would otherwise refuse `-` as an unknown argument.
        nargs: 1,
        describe:
          'local address to listen on (default 127.0.0.1 on a free port, printed), or - for stdin/stdout',
      })
      .option('verbose', {
        type: 'boolean',
        default: false,
        describe: 'say more on stderr about the connection to Portcullis (e.g. an HTTP/1.1 fallback)',
      }) as Argv<
      ConnectionFlags & {
        readonly target: string;
        readonly listen: string | undefined;
        readonly verbose: boolean;
      }
    >,
  handler: async (args) => {
    const { runTcp } = await import('./run.js');
    await withProcessIo((io) =>
      runTcp(
        { ...connectionArgs(args), target: args.target, listen: args.listen, verbose: args.verbose },
        io,
      ),
    );
  },
};

async function withProcessIo(command: (io: ClientIo) => Promise<number>): Promise<void> {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  const code = await command({
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: controller.signal,
  });
  process.stdout.write('', () => process.exit(code));
}
