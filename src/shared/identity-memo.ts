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
    const found = this.lookup(key, context);
    if (found !== undefined) return found;
    const value = make();
    this.remember(key, context, value);
    return value;
  }

  /** The remembered value for `key` under `context`, or undefined (no closure: for hot loops). */
  lookup(key: K, context: string): V | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.context === context ? entry.value : undefined;
  }

  /** Remembers `value` for `key` under `context`. */
  remember(key: K, context: string, value: V): void {
    this.entries.set(key, { context, value });
  }
}
