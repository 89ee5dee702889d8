import { keysOfFile } from '../translate/from-file.js';
import { formatProblem } from '../shared/errors.js';

/**
 * `portcullis internal-ca --config f`: prints the CA certificate (PEM) that `tls_derive` derives
 * from the config's `shared_secret`, for an Envoy started on its own (sidecar mode) to verify the
 * ADS server with: envoy/sidecar.yaml reads it from `/etc/envoy/portcullis-ca.pem`. The certificate
 * is public (its key never leaves the derivation), but it is the same on every instance only
 * because the secret is: so the config must set both `tls_derive` and `shared_secret`. The PEM
 * alone goes to `out`; exit 1, with the reason on `err`, when the config is invalid or lacks either.
 */
export async function runInternalCa(
  configPath: string,
  env: Readonly<Record<string, string | undefined>>,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const { keys, problems } = keysOfFile({ configPath, env });
  if (keys === undefined) {
    err.write(`${configPath}: invalid configuration:\n`);
    for (const problem of problems) err.write(`  - ${formatProblem(problem)}\n`);
    return 1;
  }
  if (keys.tlsDerive === undefined) {
    err.write(`${configPath}: tls_derive is not set: internal connections have no derived CA\n`);
    return 1;
  }
  if (keys.generated.sharedSecret || keys.internalTls === undefined) {
    err.write(
      `${configPath}: shared_secret is not set: the CA is derived from it; set it (file or SHARED_SECRET) for Portcullis and for this command\n`,
    );
    return 1;
  }
  out.write(keys.internalTls.caPem);
  return 0;
}
