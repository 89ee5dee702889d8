import { inspect } from 'node:util';

const REDACTED = '[redacted]';

/**
 * A secret value (client secret, shared secret, signing key, connection string). It prints as
 * `[redacted]` through `String()`, `JSON.stringify`, template literals and `util.inspect`, so a
 * Config can be logged or dumped without leaking it; code that needs the value calls `reveal()`.
 */
export class Secret<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  /** The secret itself; call only where it is used (signing, encrypting, connecting). */
  reveal(): T {
    return this.#value;
  }

  /** Never the value. */
  toString(): string {
    return REDACTED;
  }

  /** Never the value. */
  toJSON(): string {
    return REDACTED;
  }

  /** Never the value. */
  [inspect.custom](): string {
    return REDACTED;
  }
}
