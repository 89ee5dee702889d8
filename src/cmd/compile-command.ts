import { formatProblem } from '../shared/errors.js';
import { buildYielding, type BuildResult, type GoodBuild } from '../runtime/build-pipeline.js';
import { systemCaFile } from '../pki/system-ca.js';
import { RESOURCE_TYPES, TYPED_EXTENSION_CONFIG_TYPE, type ResourceType } from '../proto/type-urls.js';
import { encodeMessage } from '../proto/codec.js';
import { fastPathInternal } from '../xds/compile/fast-path.js';
import { compileFastPathRbac } from '../xds/compile/fast-path-rbac.js';

/** Runs the pipeline as the runtime would and writes warnings and problems (with key paths) to `err`. */
async function buildAndReport(
  configPath: string,
  err: NodeJS.WritableStream,
  withStage: boolean,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BuildResult> {
  // As the runtime builds it (the internal TLS and endpoints of this very config), so a dry run
  // prints what Envoy gets; secrets the config does not set are generated for this run.
  const result = await buildYielding({ configPath, env, translate: { systemCaFile: systemCaFile() } });
  for (const warning of result.warnings) err.write(`warning: ${formatProblem(warning)}\n`);
  if (!result.ok) {
    err.write(`${configPath}: invalid configuration${withStage ? ` (${result.stage})` : ''}:\n`);
    for (const problem of result.problems) err.write(`  - ${formatProblem(problem)}\n`);
  }
  return result;
}

/**
 * `portcullis compile --config f`: a dry run that prints the xDS resources Envoy would receive, as
 * YAML, with private keys redacted: the snapshot's own bytes, decoded. Exit 0 on success; 1 with
 * every problem on stderr otherwise. `env` is where options come from besides the file (the
 * process's; a test passes a container's). With the fast path on, `filters` shows its ECDS
 * resource as it is served with no session revoked (builds leave that type empty: the revocation
 * feed serves it through the snapshot store's overlay), so the dry run shows every filter Envoy
 * runs and its config. The printer (the `yaml` package and the decoders) is loaded here only, so
 * `validate` does not load it.
 */
export async function runCompile(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const result = await buildAndReport(configPath, err, true, env);
  if (!result.ok) return 1;
  const { renderEncoded, toYaml } = await import('../proto/render.js');
  const resources = {} as Record<ResourceType, Uint8Array[]>;
  for (const type of RESOURCE_TYPES)
    resources[type] = [...result.snapshot.resources[type].values()].map(({ bytes }) => bytes);
  const filter = fastPathFilter(result);
  if (filter !== undefined) resources[TYPED_EXTENSION_CONFIG_TYPE] = [filter];
  out.write(
    toYaml({ version: result.snapshot.version, ...renderEncoded(resources, { redactSecrets: true }) }),
  );
  return 0;
}

/** The fast path's ECDS resource (no revocation), encoded, when the build has the fast path on. */
function fastPathFilter(build: GoodBuild): Uint8Array | undefined {
  if (fastPathInternal(build.ir) === undefined) return undefined;
  return encodeMessage(TYPED_EXTENSION_CONFIG_TYPE, compileFastPathRbac([], { refuseAll: false }));
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
    `${configPath}: valid (${result.ir.process.routeCount} routes, version ${result.snapshot.version})\n`,
  );
  return 0;
}
