import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

/** The least heap the overload manager is sized for, whatever the machine reports: 1 GiB. */
export const MIN_ENVOY_HEAP_BYTES = 1024 * 1024 * 1024;

/** Share of the memory available to us that Envoy's heap may grow to before it sheds load. */
const ENVOY_HEAP_SHARE = 0.75;

/**
 * The heap size Envoy's overload manager measures pressure against: three quarters of the memory
 * this process may use (the cgroup v2 limit when there is one, else the machine's RAM), and never
 * below 1 GiB. A fixed 1 GiB made Envoy refuse every request ("envoy overloaded") while it loaded
 * 10,000 routes, whose 20,000 health-checked hosts and 1.5 million stats alone take about 1 GB;
 * the monitor exists to shed load before the kernel kills Envoy, so it follows the real budget.
 */
export function envoyHeapBudget(
  available: { readonly totalBytes: number; readonly cgroupLimitBytes: number | undefined } = {
    totalBytes: totalmem(),
    cgroupLimitBytes: cgroupMemoryLimit(),
  },
): number {
  const limit =
    available.cgroupLimitBytes !== undefined && available.cgroupLimitBytes < available.totalBytes
      ? available.cgroupLimitBytes
      : available.totalBytes;
  return Math.max(MIN_ENVOY_HEAP_BYTES, Math.floor(limit * ENVOY_HEAP_SHARE));
}

/** The cgroup v2 memory limit of this process, or undefined when unlimited or unknown. */
function cgroupMemoryLimit(): number | undefined {
  try {
    const text = readFileSync('/sys/fs/cgroup/memory.max', 'utf8').trim();
    const bytes = Number(text);
    return text === 'max' || !Number.isSafeInteger(bytes) || bytes <= 0 ? undefined : bytes;
  } catch {
    return undefined;
  }
}
