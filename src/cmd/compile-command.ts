import { formatProblem } from '../shared/errors.js';
import { buildFromFile } from '../runtime/build-pipeline.js';
import { systemCaFile } from '../runtime/system-ca.js';
import { renderResources, toYaml } from '../xds/codec/render.js';

/**
 * `portcullis compile --config f`: a dry run that prints the xDS resources Envoy would receive, as
 * YAML, with private keys redacted. Exit 0 on success; 1 with every problem on stderr otherwise.
 */
export function runCompile(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const result = buildFromFile(configPath, process.env, { systemCaFile: systemCaFile() });
  for (const warning of result.warnings) err.write(`warning: ${formatProblem(warning)}\n`);
  if (!result.ok) {
    err.write(`${configPath}: invalid configuration (${result.stage}):\n`);
    for (const problem of result.problems) err.write(`  - ${formatProblem(problem)}\n`);
    return 1;
  }
  out.write(
    toYaml({
      version: result.snapshot.version,
      ...renderResources(result.compiled, { redactSecrets: true }),
    }),
  );
  return 0;
}

/** `portcullis validate --config f`: exit 0 when the config is valid, 1 with every problem listed. */
export function runValidate(
  configPath: string,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): number {
  const result = buildFromFile(configPath, process.env, { systemCaFile: systemCaFile() });
  for (const warning of result.warnings) err.write(`warning: ${formatProblem(warning)}\n`);
  if (!result.ok) {
    err.write(`${configPath}: invalid configuration:\n`);
    for (const problem of result.problems) err.write(`  - ${formatProblem(problem)}\n`);
    return 1;
  }
  out.write(
    `${configPath}: valid (${result.config.routes.length} routes, version ${result.snapshot.version})\n`,
  );
  return 0;
}
