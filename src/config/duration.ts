/**
 * The longest duration Envoy accepts where it reads one as milliseconds (every timeout and
 * interval): 9,223,372,036 seconds, the most whole seconds whose nanoseconds fit an int64
 * (Envoy's `validateDurationAsMilliseconds`; any protobuf Duration is capped at 315,576,000,000 s).
 * A longer one is NACKed, so the config refuses it first.
 */
export const MAX_DURATION_MS = 9_223_372_036_000;

/**
 * Go-style durations (`30s`, `1m30s`, `500ms`, `1h`, `0`), the format Pomerium configs use, so
 * existing configs move over unchanged. Returns milliseconds, or undefined when `text` is not a
 * duration. Negative durations are rejected by callers where they make no sense.
 */
export function parseDurationMs(text: string): number | undefined {
  const input = text.trim();
  if (input === '0') return 0;
  const unitMs: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  const pattern = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  let sign = 1;
  let rest = input;
  if (rest.startsWith('-')) {
    sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '') return undefined;
  pattern.lastIndex = 0;
  while (pattern.lastIndex < rest.length) {
    const match = pattern.exec(rest);
    if (match === null) return undefined;
    total += Number(match[1]) * (unitMs[match[2] as string] as number);
    matched += match[0].length;
  }
  return matched === rest.length ? sign * total : undefined;
}

/** Formats milliseconds as a compact Go-style duration (`1m30s`, `250ms`), for docs and errors. */
export function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 1000 !== 0) return `${ms}ms`;
  let seconds = ms / 1000;
  const hours = Math.floor(seconds / 3600);
  seconds -= hours * 3600;
  const minutes = Math.floor(seconds / 60);
  seconds -= minutes * 60;
  return `${hours ? `${hours}h` : ''}${minutes ? `${minutes}m` : ''}${seconds ? `${seconds}s` : ''}`;
}
