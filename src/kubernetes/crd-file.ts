import { format, resolveConfig } from 'prettier';
import { Document } from 'yaml';
import { settingsCrd } from './crd-schema.js';

/** Where the generated CRD of the settings resource lives. */
export const CRD_PATH = new URL('../../deploy/kubernetes/crd.yaml', import.meta.url).pathname;

/**
 * deploy/kubernetes/crd.yaml exactly as it must be on disk: the CRD object written by the `yaml`
 * library and formatted by prettier with the repository's settings, so the generator
 * (`npm run docs`), the drift test and `prettier --check` agree byte for byte. (prettier is a
 * dev dependency: only the generator and tests load this.)
 */
export async function crdYaml(): Promise<string> {
  const document = new Document(settingsCrd());
  document.commentBefore =
    ' Generated from the option table (src/config/option-table*.ts) by `npm run docs`; do not edit.\n' +
    ' A test fails when this file and the table disagree.';
  const options = (await resolveConfig(CRD_PATH)) ?? {};
  return format(document.toString({ lineWidth: 0 }), { ...options, parser: 'yaml' });
}
