import { keysOfFile } from '../translate/from-file.js';
import { formatProblem } from '../shared/errors.js';

/**
 * `portcullis grpc-credential --config f`: prints the gRPC credential an Envoy started on its own
 * (sidecar mode) must present to Portcullis, derived from the config's `shared_secret` (file or
 * `SHARED_SECRET`), for the `PORTCULLIS_GRPC_CREDENTIAL` placeholder of envoy/sidecar.yaml. The
 * token alone goes to `out`, so scripts can capture it; it is a secret. Exit 1, with the reason on
 * `err`, when the config is invalid or has no `shared_secret` (a generated one would change with
 * every process, so no bootstrap could hold it).
 */
export function runGrpcCredential(
  configPath: string,
  env: Readonly<Record<string, string | undefined>>,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const { keys, problems } = keysOfFile({ configPath, env });
  if (keys === undefined) {
    err.write(`${configPath}: invalid configuration:\n`);
    for (const problem of problems) err.write(`  - ${formatProblem(problem)}\n`);
    return 1;
  }
  if (keys.generated.sharedSecret) {
    err.write(
      `${configPath}: shared_secret is not set: the credential is derived from it; set it (file or SHARED_SECRET) for Portcullis and for this command\n`,
    );
    return 1;
  }
  out.write(`${keys.grpcCredential}\n`);
  return 0;
}
