import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

/** The access-mode bits of open(2) flags, and the two modes that write (fcntl.h). */
const O_ACCMODE = 0o3;
const O_WRONLY = 0o1;
const O_RDWR = 0o2;

/**
 * The ids of the processes that have `file` open for writing (O_WRONLY or O_RDWR), from Linux's
 * /proc: each `/proc/<pid>/fd/<n>` link that resolves to the file (through symlinks, so a
 * ConfigMap path works), with the access mode of `/proc/<pid>/fdinfo/<n>` (proc(5)). Returns
 * undefined where /proc cannot tell (not Linux, /proc not mounted): the caller then settles
 * longer. Only processes this user may inspect are seen (another user's writer is not, unless
 * running as root), and a writer that closes the file between its writes is not a writer while
 * closed: renaming a complete file into place is the one safe way to change a config (README).
 *
 * Why: a writer that pauses longer than the settle time in the middle of a write must not get its
 * first half published. A scan reads every process's descriptor table, a few
 * milliseconds; the file watcher runs it only once a changed file has otherwise settled.
 */
export function openWriters(file: string, procRoot = '/proc'): number[] | undefined {
  let pids: string[];
  try {
    readdirSync(join(procRoot, 'self', 'fd'));
    pids = readdirSync(procRoot).filter((name) => /^[0-9]+$/.test(name));
  } catch {
    return undefined;
  }
  let target: string;
  try {
    target = realpathSync(file);
  } catch {
    return [];
  }
  const writers: number[] = [];
  for (const pid of pids) if (writes(join(procRoot, pid), target)) writers.push(Number(pid));
  return writers;
}

/** True when the process at `dir` (/proc/<pid>) has `target` open for writing. */
function writes(dir: string, target: string): boolean {
  let fds: string[];
  try {
    fds = readdirSync(join(dir, 'fd'));
  } catch {
    return false; // gone, or not ours to inspect
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(join(dir, 'fd', fd)) !== target) continue;
      if (isWriteMode(readFileSync(join(dir, 'fdinfo', fd), 'utf8'))) return true;
    } catch {
      // The descriptor was closed while we looked.
    }
  }
  return false;
}

/** True when an fdinfo text's `flags:` (octal, proc(5)) open the file for writing. */
export function isWriteMode(fdinfo: string): boolean {
  const flags = /^flags:\s*([0-7]+)\s*$/m.exec(fdinfo)?.[1];
  if (flags === undefined) return false;
  const mode = Number.parseInt(flags, 8) & O_ACCMODE;
  return mode === O_WRONLY || mode === O_RDWR;
}
