import { errorMessage, formatProblem, type Problem } from '../shared/errors.js';
import {
  buildYielding,
  type BuildResult,
  type FailedBuild,
  type GoodBuild,
} from '../runtime/build-pipeline.js';
import { translateFileNow } from '../translate/from-file.js';
import { compile } from '../xds/compile/compile.js';
import { checkConsistency } from '../xds/snapshot/consistency.js';
import { systemCaFile } from '../pki/system-ca.js';
import { RESOURCE_TYPES, TYPED_EXTENSION_CONFIG_TYPE, type ResourceType } from '../proto/type-urls.js';
import { encodeMessage } from '../proto/codec.js';
import { fastPathInternal } from '../xds/compile/fast-path.js';
import { compileFastPathRbac } from '../xds/compile/fast-path-rbac.js';

/** Runs the pipeline as the runtime would and writes warnings and problems (with key paths) to `err`. */
async function buildAndReport(
  configPath: string,
  err: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<BuildResult> {
  // As the runtime builds it (the internal TLS and endpoints of this very config), so a dry run
  // prints what Envoy gets; secrets the config does not set are generated for this run.
  const result = await buildYielding({ configPath, env, translate: { systemCaFile: systemCaFile() } });
  report(configPath, result, err, true);
  return result;
}

/** Writes `outcome`'s warnings, and its problems when it failed, to `err`. */
function report(
  configPath: string,
  outcome:
    | { readonly ok: true; readonly warnings: readonly Problem[] }
    | Pick<FailedBuild, 'ok' | 'stage' | 'problems' | 'warnings'>,
  err: NodeJS.WritableStream,
  withStage: boolean,
): void {
  for (const warning of outcome.warnings) err.write(`warning: ${formatProblem(warning)}\n`);
  if (!outcome.ok) {
    err.write(`${configPath}: invalid configuration${withStage ? ` (${outcome.stage})` : ''}:\n`);
    for (const problem of outcome.problems) err.write(`  - ${formatProblem(problem)}\n`);
  }
}

/** What `checkConfig` found: every stage passed (with the IR), or the first that failed and why. */
export type CheckOutcome =
  | { readonly ok: true; readonly routeCount: number; readonly warnings: readonly Problem[] }
  | {
      readonly ok: false;
      readonly stage: 'parse' | 'translate' | 'compile';
      readonly problems: readonly Problem[];
      readonly warnings: readonly Problem[];
    };

/**
 * The build pipeline's stages that read the config, as the runtime runs them (build-pipeline.ts):
 * parse, translate, compile and the consistency check, with their problems and warnings. It stops
 * before the snapshot stage, which only encodes compiled resources with protobufjs and hashes the
 * bytes: nothing there reads the config, and a message protobufjs refused would be a compiler bug
 * (the compile tests check every emitted field against Envoy's descriptor), not a config problem.
 * At 10,000 routes encoding is about 40% of a build, so `validate` answers that much sooner.
 */
export function checkConfig(configPath: string, env: NodeJS.ProcessEnv = process.env): CheckOutcome {
  const file = translateFileNow({ configPath, env }, { systemCaFile: systemCaFile() });
  if (!file.ok) return file;
  const { warnings } = file;
  let problems: readonly Problem[];
  try {
    problems = checkConsistency(compile(file.ir));
  } catch (err) {
    problems = [{ path: '', message: errorMessage(err) }];
  }
  if (problems.length > 0) return { ok: false, stage: 'compile', problems, warnings };
  return { ok: true, routeCount: file.ir.process.routeCount, warnings };
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
  const result = await buildAndReport(configPath, err, env);
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

/**
 * `portcullis validate --config f`: exit 0 when the config is valid, 1 with every problem listed.
 * It runs every stage that reads the config (`checkConfig`) but does not encode a snapshot, so it
 * prints no snapshot version: `portcullis compile` does, and the reload log names each one served.
 */
export async function runValidate(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const outcome = checkConfig(configPath, env);
  report(configPath, outcome, err, false);
  if (!outcome.ok) return 1;
  out.write(`${configPath}: valid (${outcome.routeCount} routes)\n`);
  return 0;
}
