/**
 * Sets `key` on `target` as an own, enumerable data property, whatever the key: what `JSON.parse`
 * or a YAML parser gives for `"__proto__": ...`. A plain `target[key] = value` with a key from
 * input (a map's entry name, a Secret's key, a header name) would set the prototype for
 * `__proto__` instead, and the entry would silently disappear from the map.
 */
export function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
