import type { Reader } from './value-readers.js';

/** Typed readers for one route's keys, recording problems at `<route path>.<key>`. */
export interface RouteFields {
  readonly raw: Record<string, unknown>;
  at(key: string): string;
  str(key: string): string | undefined;
  bool(key: string): boolean;
  duration(key: string): number | undefined;
}

/** Builds the RouteFields of `raw` at `path`. */
export function routeFields(reader: Reader, path: string, raw: Record<string, unknown>): RouteFields {
  const at = (key: string): string => `${path}.${key}`;
  return {
    raw,
    at,
    str: (key) => (raw[key] === undefined ? undefined : reader.string(at(key), raw[key])),
    bool: (key) => (raw[key] === undefined ? false : (reader.bool(at(key), raw[key]) ?? false)),
    duration: (key) => (raw[key] === undefined ? undefined : reader.duration(at(key), raw[key])),
  };
}
