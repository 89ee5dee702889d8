/**
 * Remembers a value computed from an immutable object, by that object's identity, for as long as
 * the object lives (a WeakMap, so nothing is kept alive by the memo). The reload pipeline hands an
 * unchanged route the very same objects from one stage to the next (parse cache -> translate ->
 * compile -> snapshot), so a reload of 10,000 routes with one changed recomputes one route's worth
 * of work at every stage.
 *
 * `context` names the other inputs the value depends on (settings outside the object, such as a
 * global default): an entry made under another context is recomputed, never reused.
 */
export class IdentityMemo<K extends object, V> {
  private readonly entries = new WeakMap<K, { readonly context: string; readonly value: V }>();

  /** The value for `key` under `context`, computing and remembering it with `make` on a miss. */
  get(key: K, context: string, make: () => V): V {
    const entry = this.entries.get(key);
    if (entry !== undefined && entry.context === context) return entry.value;
    const value = make();
    this.entries.set(key, { context, value });
    return value;
  }
}
