import { detachStrings } from './detach-strings.js';
import { fastYamlEligible, lazyLines, type SourceResult } from './formats.js';
import { spliceAgreesWithFullParse } from './splice-check.js';
import { routeListLayout, spliceParse, type SpliceBase } from './yaml-splice.js';

/** The last text parsed per config path, for splicing the next one. */
const bases = new Map<string, SpliceBase>();

/** The last spliced result, until `verifyLastSplice` has compared it with a full parse. */
let unverified: SpliceBase | undefined;

/**
 * Parses YAML config text for `path` by splicing the changed route-list items into the previous
 * parse (`yaml-splice.ts`), or returns undefined when that does not apply and the caller must
 * parse in full (then `remember` the result).
 */
export function splicedYamlSource(path: string, text: string): SourceResult | undefined {
  const base = bases.get(path);
  if (base === undefined || base.text === text) return undefined;
  // The base was eligible for the fast path, so only the changed items can bring anchors in.
  const spliced = spliceParse(base, text, fastYamlEligible);
  if (spliced === undefined) return undefined;
  bases.set(path, spliced);
  unverified = spliced;
  return { document: spliced.document, lines: lazyLines(text) };
}

/**
 * Records a full parse of `path` as the base for the next splice (route lists in block style only).
 * The document's long strings are detached from js-yaml's copy of the text (`detachStrings`).
 */
export function rememberYamlParse(path: string, text: string, document: unknown): void {
  const list = fastYamlEligible(text) ? routeListLayout(text) : undefined;
  if (list === undefined || document === null || typeof document !== 'object' || Array.isArray(document)) {
    bases.delete(path);
    return;
  }
  bases.set(path, { text, document: detachStrings(document as Record<string, unknown>), list });
}

/**
 * Checks the last spliced parse against a full parse of the same text (in a worker thread; see
 * `spliceAgreesWithFullParse`): true when they agree (or nothing is pending). On a disagreement
 * every base is dropped, so the next load parses in full; the caller reloads.
 */
export async function verifyLastSplice(): Promise<boolean> {
  const pending = unverified;
  unverified = undefined;
  if (pending === undefined) return true;
  if (await spliceAgreesWithFullParse(pending)) return true;
  bases.clear();
  return false;
}

/** Forgets every base, so the next load of each file parses it in full (cold-build benchmarks). */
export function forgetYamlBases(): void {
  bases.clear();
  unverified = undefined;
}

/** True while a spliced parse awaits `verifyLastSplice`. */
export function spliceAwaitingVerification(): boolean {
  return unverified !== undefined;
}
