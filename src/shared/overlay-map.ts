/**
 * A read-only view of two maps, `front` first: what `front` lacks is looked up in `back`. Used to
 * keep a few entries of an older map reachable beside a new one without copying either (at 10,000
 * entries a merged copy cost milliseconds on every reload). The maps must not change afterwards.
 */
export class OverlayMap<K, V> implements ReadonlyMap<K, V> {
  constructor(
    private readonly front: ReadonlyMap<K, V>,
    private readonly back: ReadonlyMap<K, V>,
  ) {}

  get size(): number {
    let size = this.front.size;
    for (const key of this.back.keys()) if (!this.front.has(key)) size++;
    return size;
  }

  get(key: K): V | undefined {
    return this.front.has(key) ? this.front.get(key) : this.back.get(key);
  }

  has(key: K): boolean {
    return this.front.has(key) || this.back.has(key);
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }

  entries(): MapIterator<[K, V]> {
    const merged = new Map(this.back);
    for (const [key, value] of this.front) merged.set(key, value);
    return merged.entries();
  }

  keys(): MapIterator<K> {
    return new Map(this.entries()).keys();
  }

  values(): MapIterator<V> {
    return new Map(this.entries()).values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
}
