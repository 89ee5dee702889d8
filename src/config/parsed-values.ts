import type { RawValue } from './sources.js';

/**
 * The typed values of the global options after each was read, with where each came from, so
 * cross-option checks can name the key (or environment variable) the user actually set.
 */
export class ParsedValues {
  private readonly typed = new Map<string, unknown>();

  /**
   * `unsetPath` names an option that was not set, for messages that point at it (`use idp_scopes
   * for ...`): the key itself unless a caller reads options under other names.
   */
  constructor(
    private readonly raw: ReadonlyMap<string, RawValue>,
    private readonly unsetPath: (key: string) => string = (key) => key,
  ) {}

  /** Records the typed value of `key` (undefined when reading it failed). */
  set(key: string, value: unknown): void {
    this.typed.set(key, value);
  }

  /** The typed value, or undefined when unset or invalid. */
  get<T>(key: string): T | undefined {
    return this.typed.get(key) as T | undefined;
  }

  /** The key or environment variable the value came from, for messages (see `unsetPath` when unset). */
  path(key: string): string {
    return this.raw.get(key)?.path ?? this.unsetPath(key);
  }

  /** True when the user set the option (in the file or the environment), not just the default. */
  explicit(key: string): boolean {
    const source = this.raw.get(key)?.source;
    return source === 'env' || source === 'file';
  }

  /** True when the option was given but could not be read (a problem was already reported). */
  failed(key: string): boolean {
    return this.raw.has(key) && this.typed.get(key) === undefined;
  }
}
