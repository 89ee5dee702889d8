import { constantMessage, durationMs, wrapped, type ProtoObject } from '../codec/codec.js';

/**
 * Frozen message values that many resources share: Durations and wrappers by value, and constant
 * sub-messages. Every object messages share instead of repeating is one fewer to allocate, and
 * one the garbage collector does not copy while a batch of messages waits to be encoded (and
 * while the messages compile used to hold until encoding were alive); compile got measurably
 * faster at 10,000 routes. The values are frozen because they are shared: compiled
 * messages are read, never edited. The caches are bounded, as durations and numbers come from config.
 */
const MAX_CACHED = 4096;
const durations = new Map<number, ProtoObject>();
const wrappers = new Map<boolean | number | string, ProtoObject>();

/** `durationMs(ms)`, shared and frozen. */
export function sharedDuration(ms: number): ProtoObject {
  let value = durations.get(ms);
  if (value === undefined) {
    value = Object.freeze(durationMs(ms));
    if (durations.size < MAX_CACHED) durations.set(ms, value);
  }
  return value;
}

/** `wrapped(value)`, shared and frozen. */
export function sharedWrapped(value: boolean | number | string): ProtoObject {
  if (Object.is(value, -0)) return wrapped(value); // Map keys equate -0 and 0; a double field would not.
  let out = wrappers.get(value);
  if (out === undefined) {
    out = Object.freeze(wrapped(value));
    if (wrappers.size < MAX_CACHED) wrappers.set(value, out);
  }
  return out;
}

/** Deep-freezes a constant message value (see `constantMessage`: typed configs in it are encoded once). */
export function frozen<T extends ProtoObject>(value: T): T {
  return constantMessage(value);
}
