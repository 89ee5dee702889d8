/**
 * Remembers a value computed from an immutable object, by that object's identity, for as long as
 * the object lives (a WeakMap, so nothing is kept alive by the memo). The reload pipeline hands an
 * unchanged route the very same objects from one stage to the next, so a stage that remembers its
 * results this way (the authorization state) recomputes only the changed routes. The xDS stages
 * use merge walks beside their previous build instead: no table insertion per object on a cold
 * build.
 *
 * `context` names the other inputs the value depends on (settings outside the object, such as a
 * global default): an entry made under another context is recomputed, never reused. A build uses
 * one context for all its keys, so the memo holds one context at a time and a new one forgets every
 * entry: no per-entry record of the context (an object per route per stage at 10,000 routes).
 */
export class IdentityMemo<K extends object, V> {
  private entries = new WeakMap<K, V>();
  private context: string | undefined;

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
    return context === this.context ? this.entries.get(key) : undefined;
  }

  /** Remembers `value` for `key` under `context` (forgetting every entry of another context). */
  remember(key: K, context: string, value: V): void {
    if (context !== this.context) {
      this.entries = new WeakMap<K, V>();
      this.context = context;
    }
    this.entries.set(key, value);
  }
}
