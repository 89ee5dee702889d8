// The import arrows of ../shared/DESIGN.md are ESLint zones (eslint.config.js): these tests lint
// small sources as if they sat at given places in src/ and check the rule fires on a crossing
// import and stays quiet on an allowed one, so a rule that silently stopped matching fails here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The rule ids ESLint reports for `source` placed at `file` (relative to the repo root). */
async function ruleIdsFor(file: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${root}${file}` });
  assert.ok(result !== undefined, 'ESLint returned no result');
  return result.messages.map((message) => message.ruleId ?? message.message);
}

const CROSSINGS: readonly (readonly [string, string])[] = [
  ['src/xds/server/crossing.ts', "export type { Config } from '../../config/types.js';\n"],
  ['src/xds/snapshot/crossing.ts', "export { compile } from '../compile/compile.js';\n"],
  ['src/shared/crossing.ts', "export type { IR } from '../ir/types.js';\n"],
  ['src/ir/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/authorize/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/translate/crossing.ts', "export { startAllInOne } from '../cmd/all-in-one.js';\n"],
  ['src/runtime/crossing.ts', "export { startAllInOne } from '../cmd/all-in-one.js';\n"],
  // After parse only translate reads Config: not the reload loop, the composition root, the key
  // ring, observability or the platform folders.
  ['src/runtime/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/cmd/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/cmd/crossing.ts', "export { loadConfigFile } from '../config/load-file.js';\n"],
  ['src/keys/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/observability/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/grpc/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/databroker/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/authenticate/crossing.ts', "export type { Config } from '../config/types.js';\n"],
  // Layers: the platform sits below the services, the reload loop below observability.
  ['src/pki/crossing.ts', "export { translate } from '../translate/translate.js';\n"],
  ['src/keys/crossing.ts', "export { AuthorizeService } from '../authorize/service.js';\n"],
  [
    'src/runtime/crossing.ts',
    "export { PortcullisMetrics } from '../observability/metrics/portcullis-metrics.js';\n",
  ],
  ['src/xds/publish/crossing.ts', "export type { BuildSubscriber } from '../../runtime/subscribers.js';\n"],
  ['src/proto/crossing.ts', "export type { IR } from '../ir/types.js';\n"],
  // The Kubernetes config source reads config and shared only; only cmd imports it.
  ['src/kubernetes/crossing.ts', "export { translate } from '../translate/translate.js';\n"],
  ['src/kubernetes/crossing.ts', "export type { IR } from '../ir/types.js';\n"],
  ['src/runtime/crossing.ts', "export { settingsCrd } from '../kubernetes/crd-schema.js';\n"],
  ['src/config/crossing.ts', "export { settingsCrd } from '../kubernetes/crd-schema.js';\n"],
  ['src/authorize/crossing.ts', "export { settingsCrd } from '../kubernetes/crd-schema.js';\n"],
];

for (const [file, source] of CROSSINGS) {
  test(`a crossing import fails lint: ${file} -> ${source.split("'")[1]}`, async () => {
    assert.ok((await ruleIdsFor(file, source)).includes('import-x/no-restricted-paths'));
  });
}

const ALLOWED: readonly (readonly [string, string])[] = [
  ['src/translate/allowed.ts', "export type { Config } from '../config/types.js';\n"],
  ['src/xds/server/allowed.ts', "export type { Snapshot } from '../snapshot/types.js';\n"],
  ['src/runtime/allowed.ts', "export type { IR } from '../ir/types.js';\n"],
  ['src/config/allowed.ts', "export { PortcullisError } from '../shared/errors.js';\n"],
  ['src/cmd/allowed.ts', "export { migrateDocument } from '../config/migrate.js';\n"],
  ['src/keys/allowed.ts', "export { deriveInternalTlsSync } from '../pki/derived-tls.js';\n"],
  ['src/authorize/allowed.ts', "export { messageType } from '../proto/proto-root.js';\n"],
  ['src/databroker/allowed.ts', "export { messageType } from '../proto/proto-root.js';\n"],
  ['src/translate/allowed.ts', "export type { KeyRing } from '../keys/key-ring.js';\n"],
  ['src/observability/allowed.ts', "export type { GoodBuild } from '../runtime/build-pipeline.js';\n"],
  ['src/kubernetes/allowed.ts', "export { GLOBAL_OPTIONS } from '../config/option-table.js';\n"],
  ['src/kubernetes/allowed.ts', "export { compileRe2 } from '../shared/re2.js';\n"],
  ['src/cmd/allowed.ts', "export { settingsCrd } from '../kubernetes/crd-schema.js';\n"],
];

for (const [file, source] of ALLOWED) {
  test(`an import along the arrows passes: ${file} -> ${source.split("'")[1]}`, async () => {
    assert.deepEqual(await ruleIdsFor(file, source), []);
  });
}
