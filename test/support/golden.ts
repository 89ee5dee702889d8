import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';

/** True when the run should rewrite golden files instead of comparing (`UPDATE_GOLDEN=1 npm test`). */
export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === '1';

/** Repository-relative folder of golden cases. */
export const GOLDEN_DIR = new URL('../golden', import.meta.url).pathname;

/**
 * Compares `actual` with the golden file at `path`, or rewrites it when UPDATE_GOLDEN=1. A missing
 * golden file fails with instructions rather than passing silently.
 */
export function expectGolden(path: string, actual: string): void {
  if (UPDATE_GOLDEN) {
    writeFileSync(path, actual);
    return;
  }
  assert.ok(existsSync(path), `golden file ${path} is missing; run UPDATE_GOLDEN=1 npm test to create it`);
  assert.equal(
    actual,
    readFileSync(path, 'utf8'),
    `${path} differs; if the change is intended run UPDATE_GOLDEN=1 npm test`,
  );
}

/** Deletes files in `dir` matching `pattern` that `keep` does not contain (orphans), when updating. */
export function deleteOrphans(dir: string, pattern: RegExp, keep: ReadonlySet<string>): string[] {
  const orphans = readdirSync(dir).filter((file) => pattern.test(file) && !keep.has(file));
  if (UPDATE_GOLDEN) for (const file of orphans) unlinkSync(join(dir, file));
  return orphans;
}

/** Case names: files `<name>.in.yaml` in `dir`, sorted. */
export function caseNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.in.yaml'))
    .map((file) => file.slice(0, -'.in.yaml'.length))
    .sort();
}
