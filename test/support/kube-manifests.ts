import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { KubeObject } from './kube-client.js';
import { readYamlObjects } from './kube-crds.js';

/** deploy/kubernetes: the manifests a person applies. */
export const DEPLOY_DIR = fileURLToPath(new URL('../../deploy/kubernetes', import.meta.url));

/** A folder of deploy/kubernetes with a kustomization.yaml, and the resources it lists (as written). */
export interface Kustomization {
  /** The folder, relative to DEPLOY_DIR (`''` for the base). */
  readonly dir: string;
  readonly resources: readonly string[];
}

/** Every YAML file under DEPLOY_DIR, relative to it (`redis/redis.yaml`), sorted. */
export function deployFiles(): string[] {
  return readdirSync(DEPLOY_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.ya?ml$/.test(file))
    .sort();
}

/** Every kustomization.yaml under DEPLOY_DIR, read with the `yaml` package. */
export function kustomizations(): Kustomization[] {
  return deployFiles()
    .filter((file) => file === 'kustomization.yaml' || file.endsWith('/kustomization.yaml'))
    .map((file) => {
      const dir = relative(DEPLOY_DIR, join(DEPLOY_DIR, file, '..'));
      const parsed = parse(readFileSync(join(DEPLOY_DIR, file), 'utf8')) as { resources?: string[] };
      return { dir, resources: parsed.resources ?? [] };
    });
}

/** The objects of one file under DEPLOY_DIR (`deployment.yaml`, `example/example-global.yaml`), in file order. */
export function manifestObjects(file: string): KubeObject[] {
  return readYamlObjects(join(DEPLOY_DIR, file));
}

/** The objects a kustomization's folder lists, file by file in its order (the CRD file included). */
export function kustomizationObjects(dir: string): KubeObject[] {
  const found = kustomizations().find((kustomization) => kustomization.dir === dir);
  if (found === undefined) throw new Error(`no kustomization.yaml in deploy/kubernetes/${dir}`);
  return found.resources.flatMap((resource) => manifestObjects(join(dir, resource)));
}

/** The one object of `kind` named `name` among `objects`; throws naming what is missing. */
export function findObject(objects: readonly KubeObject[], kind: string, name: string): KubeObject {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (found === undefined) throw new Error(`no ${kind} ${name} in the manifests`);
  return found;
}
