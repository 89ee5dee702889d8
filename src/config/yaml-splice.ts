/**
 * Incremental parsing of a large YAML config: when a reload's text differs from the previous one
 * only inside the block list of routes (`routes:` or `policy:` at the top level, block style), only
 * the changed list items are parsed again and spliced into a copy of the previous document. The
 * untouched items keep their very objects, which lets every later stage (route validation,
 * translate, compile, snapshot) recognise them by identity and skip them.
 *
 * It is an optimisation with a strict fallback: anything it cannot prove local (a change outside
 * the list, a line outdented out of it, tabs, document markers, an item count that disagrees with
 * the parser) returns undefined, and the caller parses the whole text. Callers only use it for
 * text that already qualifies for the fast path (no anchors or aliases anywhere), so an item
 * cannot refer to another.
 */
import jsYaml from 'js-yaml';

/** What the previous parse left behind for the next one. */
export interface SpliceBase {
  readonly text: string;
  readonly document: Readonly<Record<string, unknown>>;
  readonly list: RouteListLayout;
}

/** Where the top-level block list of routes sits in a text. */
export interface RouteListLayout {
  readonly key: string;
  /** Indentation of the `- ` that starts each item. */
  readonly indent: number;
  /** Offset of each item's first line. */
  readonly itemStarts: readonly number[];
  /** Offset just past the list (the next top-level line, or the end of the text). */
  readonly end: number;
}

const LIST_KEYS = new Set(['routes', 'policy']);

/**
 * Finds the top-level `routes:` (or `policy:`) block list in `text`, or undefined when there is
 * none in block style or the text has document markers or tab indentation.
 */
export function routeListLayout(text: string): RouteListLayout | undefined {
  let offset = 0;
  let key: string | undefined;
  let indent = -1;
  const itemStarts: number[] = [];
  while (offset < text.length) {
    const newline = text.indexOf('\n', offset);
    const lineEnd = newline < 0 ? text.length : newline;
    const line = text.slice(offset, lineEnd);
    const next = newline < 0 ? text.length : newline + 1;
    if (line.startsWith('---') || line.startsWith('...') || /^\s*\t/.test(line)) return undefined;
    const content = line.trimStart();
    const depth = line.length - content.length;
    const blank = content === '' || content.startsWith('#');
    if (key === undefined) {
      const match = /^([A-Za-z_]+):\s*(#.*)?$/.exec(line);
      if (match !== null && LIST_KEYS.has(match[1] as string)) key = match[1];
    } else if (!blank) {
      if (indent < 0) {
        if (!content.startsWith('- ')) return undefined;
        indent = depth;
      }
      const startsItem = depth === indent && content.startsWith('- ');
      const inside = startsItem || depth > indent;
      if (!inside) {
        if (depth === 0 && indent === 0 && !content.startsWith('-'))
          return layout(key, indent, itemStarts, offset);
        if (depth < indent) return depth === 0 ? layout(key, indent, itemStarts, offset) : undefined;
        return undefined;
      }
      if (startsItem) itemStarts.push(offset);
    }
    offset = next;
  }
  return key === undefined || indent < 0 ? undefined : layout(key, indent, itemStarts, text.length);
}

function layout(key: string, indent: number, itemStarts: number[], end: number): RouteListLayout | undefined {
  return itemStarts.length === 0 ? undefined : { key, indent, itemStarts, end };
}

/**
 * Parses `text` by splicing into `base`, or returns undefined when the change is not confined to
 * whole items of the route list, or `acceptsChange` refuses the changed items' text (the caller
 * then parses everything).
 */
export function spliceParse(
  base: SpliceBase,
  text: string,
  acceptsChange: (changedText: string) => boolean = () => true,
): SpliceBase | undefined {
  const { list } = base;
  const oldText = base.text;
  const items = base.document[list.key];
  if (!Array.isArray(items) || items.length !== list.itemStarts.length) return undefined;
  const shortest = Math.min(oldText.length, text.length);
  const prefix = commonLength(oldText, text, shortest, (a, from, to) => a.slice(from, to));
  const suffix = commonLength(oldText, text, shortest - prefix, (a, from, to) =>
    a.slice(a.length - to, a.length - from),
  );
  const first = list.itemStarts[0] as number;
  const oldChangeEnd = oldText.length - suffix;
  if (prefix < first || oldChangeEnd > list.end) return undefined;
  // Items [from, to) of the old list cover the change; the new text has its own version of them.
  let from = 0;
  while (from + 1 < list.itemStarts.length && (list.itemStarts[from + 1] as number) <= prefix) from++;
  let to = from + 1;
  while (to < list.itemStarts.length && (list.itemStarts[to] as number) < oldChangeEnd) to++;
  const regionStart = list.itemStarts[from] as number;
  const oldRegionEnd = to < list.itemStarts.length ? (list.itemStarts[to] as number) : list.end;
  const newRegionEnd = oldRegionEnd + (text.length - oldText.length);
  const region = text.slice(regionStart, newRegionEnd);
  // Only the changed items are new text (with the characters around them, for token boundaries).
  if (!acceptsChange(text.slice(Math.max(0, regionStart - 1), newRegionEnd + 1))) return undefined;
  const regionItems = itemOffsets(region, list.indent);
  if (regionItems === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = region.trim() === '' ? [] : jsYaml.load(region, { schema: jsYaml.CORE_SCHEMA, json: false });
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== regionItems.length) return undefined;
  const shift = text.length - oldText.length;
  return {
    text,
    document: { ...base.document, [list.key]: [...items.slice(0, from), ...parsed, ...items.slice(to)] },
    list: {
      key: list.key,
      indent: list.indent,
      itemStarts: [
        ...list.itemStarts.slice(0, from),
        ...regionItems.map((offset) => regionStart + offset),
        ...list.itemStarts.slice(to).map((offset) => offset + shift),
      ],
      end: list.end + shift,
    },
  };
}

/**
 * Length of the longest common run of `a` and `b` (at most `limit`), where `part(x, from, to)` is
 * the run's characters [from, to) counted from the start (prefix) or the end (suffix). A binary
 * search over substring comparisons, which V8 does as a memory compare: a few milliseconds for a
 * 5 MB config instead of a character loop.
 */
function commonLength(
  a: string,
  b: string,
  limit: number,
  part: (text: string, from: number, to: number) => string,
): number {
  let low = 0;
  let high = limit;
  while (low < high) {
    const mid = (low + high + 1) >>> 1;
    if (part(a, low, mid) === part(b, low, mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * Offsets of the item starts in `region`, or undefined when a line does not belong to list items
 * at `indent`: every non-blank line must start an item (`- ` at the indent) or be indented deeper,
 * and the first one must start an item.
 */
function itemOffsets(region: string, indent: number): number[] | undefined {
  const starts: number[] = [];
  let offset = 0;
  for (const line of region.split('\n')) {
    const at = offset;
    offset += line.length + 1;
    const content = line.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    if (/^\s*\t/.test(line) || line.startsWith('---') || line.startsWith('...')) return undefined;
    const depth = line.length - content.length;
    const startsItem = depth === indent && content.startsWith('- ');
    if (starts.length === 0 && !startsItem) return undefined;
    if (!startsItem && depth <= indent) return undefined;
    if (startsItem) starts.push(at);
  }
  return starts;
}
