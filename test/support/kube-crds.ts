import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { hasCondition, type KubeClient, type KubeObject } from './kube-client.js';

/** The Go module under test/ that pins sigs.k8s.io/gateway-api (its go.mod names the version). */
const GATEWAY_API_MODULE = fileURLToPath(new URL('../kubernetes/gateway-api', import.meta.url));

/** The standard-channel Gateway API CRDs Portcullis reads, by file name in `config/crd/standard/`. */
export const GATEWAY_API_CRD_FILES = [
  'gateway.networking.k8s.io_gatewayclasses.yaml',
  'gateway.networking.k8s.io_gateways.yaml',
  'gateway.networking.k8s.io_httproutes.yaml',
  'gateway.networking.k8s.io_referencegrants.yaml',
] as const;

/**
 * The pinned Gateway API module's `config/crd/standard` directory in the Go module cache, from
 * `go mod download -json` (a no-op once `npm run setup:kubernetes` fetched it). Throws saying how
 * to fix it when Go or the module is missing.
 */
export function gatewayApiCrdDir(): string {
  const result = spawnSync('go', ['mod', 'download', '-json', 'sigs.k8s.io/gateway-api'], {
    cwd: GATEWAY_API_MODULE,
    encoding: 'utf8',
  });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `\`go mod download sigs.k8s.io/gateway-api\` in test/kubernetes/gateway-api failed ` +
        `(${result.error?.message ?? result.stderr.trim()}); install Go 1.26+ and run \`npm run setup:kubernetes\``,
    );
  }
  return join((JSON.parse(result.stdout) as { Dir: string }).Dir, 'config', 'crd', 'standard');
}

/** The objects of a (multi-document) YAML file, empty documents left out; a YAML error throws naming the file. */
export function readYamlObjects(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8')).flatMap((document) => {
    if (document.errors.length > 0) throw new Error(`${path}: ${document.errors[0]?.message ?? 'bad YAML'}`);
    const object = document.toJS() as KubeObject | null;
    return object === null ? [] : [object];
  });
}

/** Applies each CRD and waits (bounded) until every one is Established (its kinds are served). */
export async function applyCrds(client: KubeClient, crds: readonly KubeObject[]): Promise<void> {
  for (const crd of crds) await client.apply(crd);
  for (const crd of crds) {
    await client.waitFor(
      crd,
      (object) => hasCondition(object, 'Established'),
      `CRD ${crd.metadata.name} to be Established`,
    );
  }
}

/** Applies the standard Gateway API CRDs Portcullis reads (GATEWAY_API_CRD_FILES) and waits until they are Established. */
export async function applyGatewayApiCrds(client: KubeClient): Promise<KubeObject[]> {
  const dir = gatewayApiCrdDir();
  const crds = GATEWAY_API_CRD_FILES.flatMap((file) => readYamlObjects(join(dir, file)));
  await applyCrds(client, crds);
  return crds;
}
