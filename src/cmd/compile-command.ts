import { formatProblem } from '../shared/errors.js';
import { buildYielding, type BuildInput, type BuildResult } from '../runtime/build-pipeline.js';
import { deriveInternalTls } from '../runtime/derived-tls.js';
import { fallbackCertificates } from '../runtime/fallback-tls.js';
import type { InternalTlsPeer } from '../contract/internal-tls.js';
import { systemCaFile } from '../runtime/system-ca.js';
import { internalEndpoints } from '../runtime/envoy-endpoints.js';
import { IdentityResolver } from '../runtime/identity.js';
import { ownHttpAddress } from '../runtime/authenticate-settings.js';
import { splitHostPort } from '../runtime/address.js';
import { silentLogger } from '../shared/logger.js';
import type { Config } from '../config/types.js';
import type { TranslateOptions } from '../translate/translate.js';

/**
 * The translate options the runtime would use, so a dry run prints what Envoy gets: `prepare`
 * derives the internal TLS when `tls_derive` is set, as the runtime does at start.
 */
function dryRunOptions(): Pick<BuildInput, 'translate' | 'prepare'> {
  const identities = new IdentityResolver(silentLogger);
  const caFile = systemCaFile();
  let tls: InternalTlsPeer | undefined;
  return {
    prepare: async (config) => {
      if (config.tls_derive === undefined) return;
      const derived = await deriveInternalTls(identities.resolve(config).sharedSecret, config.tls_derive);
      tls = { caPem: derived.caPem, serverName: derived.serverName };
    },
    translate: (config: Config): TranslateOptions => {
      const identity = identities.resolve(config);
      return {
        systemCaFile: caFile,
        fallbackCertificate: fallbackCertificates(identity.sharedSecret),
        internal: internalEndpoints(config, {
          jwksJson: identity.jwksJson,
          credential: identity.grpcCredential,
          ownHttp: ownHttpAddress(splitHostPort(config.grpc_address)),
          ...(tls === undefined ? {} : { tls }),
        }),
      };
    },
  };
}
import { renderResources, toYaml } from '../xds/codec/render.js';
import { compile } from '../xds/compile/compile.js';

/** Runs the pipeline as the runtime would and writes warnings and problems (with key paths) to `err`. */
async function buildAndReport(
  configPath: string,
  err: NodeJS.WritableStream,
  withStage: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BuildResult> {
  const result = await buildYielding({ configPath, env, ...dryRunOptions() });
  for (const warning of result.warnings) err.write(`warning: ${formatProblem(warning)}\n`);
  if (!result.ok) {
    err.write(`${configPath}: invalid configuration${withStage ? ` (${result.stage})` : ''}:\n`);
    for (const problem of result.problems) err.write(`  - ${formatProblem(problem)}\n`);
  }
  return result;
}

/**
 * `portcullis compile --config f`: a dry run that prints the xDS resources Envoy would receive, as
 * YAML, with private keys redacted. Exit 0 on success; 1 with every problem on stderr otherwise.
 * `env` is where options come from besides the file (the process's; a test passes a container's).
 */
export async function runCompile(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const result = await buildAndReport(configPath, err, true, env);
  if (!result.ok) return 1;
  out.write(
    toYaml({
      version: result.snapshot.version,
      ...renderResources(compile(result.ir), { redactSecrets: true }),
    }),
  );
  return 0;
}

/** `portcullis validate --config f`: exit 0 when the config is valid, 1 with every problem listed. */
export async function runValidate(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const result = await buildAndReport(configPath, err, false);
  if (!result.ok) return 1;
  out.write(
    `${configPath}: valid (${result.config.routes.length} routes, version ${result.snapshot.version})\n`,
  );
  return 0;
}
