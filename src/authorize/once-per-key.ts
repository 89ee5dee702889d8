/**
 * Answers "is this the first time for `key`?" with bounded memory: once `max` keys are held it
 * forgets them all and starts again, so a flood of distinct keys (sessions with large identity
 * assertions) costs at most `max` entries and, after a reset, one repeated warning per key. Used
 * for log lines that would otherwise repeat on every request.
 */
export class OncePerKey {
  readonly #seen = new Set<string>();

  constructor(readonly max: number) {}

  /** True the first time `key` is seen since the last reset; records it. */
  first(key: string): boolean {
    if (this.#seen.has(key)) return false;
    if (this.#seen.size >= this.max) this.#seen.clear();
    this.#seen.add(key);
    return true;
  }

  /** How many keys are held now (never more than `max`). */
  get size(): number {
    return this.#seen.size;
  }
}
