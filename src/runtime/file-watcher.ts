import { hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Logger } from '../shared/logger.js';
import { openWriters } from './open-writers.js';

/** How long an in-place change must stay the same before it is reported, unless told otherwise. */
export const DEFAULT_SETTLE_MS = 1000;

/** How long a settled file may stay open for writing before it is loaded anyway (with a warning). */
export const DEFAULT_WRITER_WAIT_MS = 60_000;

/** The least time between two looks for writers of a file held open. */
const WRITER_RECHECK_MS = 500;

/** Where no process table can be read (no /proc): settle this many times longer. */
const BLIND_SETTLE_FACTOR = 5;

/** Options of `FileWatcher`. */
export interface FileWatcherOptions {
  /** How long an in-place change must stay the same (default DEFAULT_SETTLE_MS). */
  readonly settleMs?: number;
  /** The backup poll's period (default 2000). */
  readonly pollMs?: number;
  /** The longest wait for writers to close a settled file (default DEFAULT_WRITER_WAIT_MS). */
  readonly writerWaitMs?: number;
  /** Who has a file open for writing; undefined: cannot tell (default `openWriters`, from /proc). */
  readonly openWriters?: (file: string) => readonly number[] | undefined;
  /** Where waiting for a writer is logged. */
  readonly logger?: Logger;
}

/** After a `change` event, how long to wait before looking, so a burst of writes is read once. */
const LOOK_AFTER_CHANGE_MS = 25;

/** What `check` saw of one file. */
interface Observation {
  /** The bytes, or undefined when the file could not be read. */
  readonly content: Buffer | undefined;
  /** The bytes' SHA-256, or why the file could not be read: what decides whether it changed. */
  readonly print: string;
  /** Device and inode of the file read (through symlinks): a new one at the path is a rename. */
  readonly inode: string | undefined;
  /** The print with size, mtime and inode: a file is settled once this stays the same. */
  readonly state: string;
}

/**
 * Watches a set of files for content changes, robust to how files really change: editors that
 * write a temp file and rename it over the original, Kubernetes ConfigMap volumes that swap a
 * `..data` symlink, and writers that write the file in place, in several parts. It watches the
 * parent directories (which see renames and symlink swaps), and decides by content, so touching a
 * file without changing it does nothing. A slow poll (`pollMs`, default 2000) backs up file
 * systems that emit no events.
 *
 * When a change is reported:
 * - A rename: the path now names a different file (device and inode, through symlinks) than the
 *   one last seen there. rename(2) puts a complete file in place at once (an editor's atomic save,
 *   a ConfigMap `..data` swap), so it is reported at once.
 * - Anything else (a write in place, a file that vanished or came back) may still be under way, so
 *   it is reported only once its content, size and mtime have stayed the same for `settleMs`
 *   (default DEFAULT_SETTLE_MS): a config written in two parts a moment apart is never published
 *   half-written. A file deleted and created again before anything looks counts as a rename.
 * - A settled in-place change is still held while a process has the file open for writing
 *   (`openWriters`, from /proc): a writer that pauses longer than `settleMs` mid-write keeps it
 *   open, and its first half must never be published. The wait is bounded by
 *   `writerWaitMs` (then it is loaded, with a warning). Where the process table cannot be read,
 *   a change must instead stay the same for BLIND_SETTLE_FACTOR times `settleMs`.
 * - No change is reported while any watched file is still settling, since the reload reads them
 *   all: a rename waits for an in-place write to another watched file to finish.
 * Events for other files in the directory (an editor's temp file being written) are ignored.
 *
 * It keeps a SHA-256 of each file, not its bytes (a 10,000-route config is ~5 MB), and hands the
 * bytes of the files that changed to `onChange`, so the reload parses what was compared instead of
 * reading the file a second time.
 */
export class FileWatcher {
  private readonly watchers: FSWatcher[] = [];
  /** Per file: what was last reported (or found by `watch`). */
  private reported = new Map<string, { readonly print: string; readonly inode: string | undefined }>();
  /** Per file changed and not yet reported: its last state, inode, and since when it has been so. */
  private settling = new Map<
    string,
    { readonly state: string; readonly inode: string | undefined; readonly since: number }
  >();
  /** Changes decided but held back while another file settles: path -> bytes (none if unreadable). */
  private ready = new Map<string, Buffer | undefined>();
  private names = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private poller: NodeJS.Timeout | undefined;
  private files: string[] = [];
  /** Per settled file still open for writing: since when the writers have kept it waiting. */
  private writerWait = new Map<string, number>();

  constructor(
    private readonly onChange: (changed: ReadonlyMap<string, Buffer>) => void,
    private readonly options: FileWatcherOptions = {},
  ) {}

  /**
   * Replaces the watched set with `files` (absolute or relative to cwd). A file already watched
   * keeps what was last reported of it (the reload that called this may have raced a write); a
   * new one is recorded as it is now.
   */
  watch(files: readonly string[]): void {
    const wanted = [...new Set(files.map((file) => resolve(file)))];
    // The same set (every reload of an unchanged file list): keep the watchers.
    if (
      this.poller !== undefined &&
      wanted.length === this.files.length &&
      wanted.every((f, i) => f === this.files[i])
    )
      return;
    this.close();
    this.files = wanted;
    this.reported = new Map(
      this.files.map((file) => {
        const known = this.reported.get(file);
        if (known !== undefined) return [file, known];
        const { print, inode } = observe(file);
        return [file, { print, inode }];
      }),
    );
    this.settling = new Map([...this.settling].filter(([file]) => this.files.includes(file)));
    this.ready = new Map([...this.ready].filter(([file]) => this.files.includes(file)));
    this.names = new Set([...this.files.map((file) => basename(file)), '..data']);
    for (const directory of new Set(this.files.map((file) => dirname(file)))) {
      try {
        const watcher = watch(directory, { persistent: false }, (event, name) => this.onEvent(event, name));
        watcher.on('error', () => this.wakeIn(0));
        this.watchers.push(watcher);
      } catch {
        // A directory that cannot be watched is still covered by the poll.
      }
    }
    this.poller = setInterval(() => this.check(), this.options.pollMs ?? 2000);
    this.poller.unref();
    if (this.settling.size > 0 || this.ready.size > 0) this.wakeIn(0);
  }

  /** Stops watching. */
  close(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.poller !== undefined) clearInterval(this.poller);
    this.timer = undefined;
    this.wakeAt = Infinity;
    this.poller = undefined;
  }

  private onEvent(event: string, name: string | Buffer | null): void {
    const file = name === null ? undefined : String(name);
    if (file !== undefined && !this.names.has(file)) return;
    // Several events of one save arrive together: look once, after this turn of the loop.
    this.wakeIn(event === 'rename' ? 0 : Math.min(LOOK_AFTER_CHANGE_MS, this.settleMs()));
  }

  private settleMs(): number {
    return this.options.settleMs ?? DEFAULT_SETTLE_MS;
  }

  private writersOf(file: string): readonly number[] | undefined {
    return (this.options.openWriters ?? openWriters)(file);
  }

  /**
   * For an in-place change of `file` settled for `stillMs`: 0 when it may be reported now (no
   * writer has it open, or the writers kept it waiting longer than `writerWaitMs`), else how long
   * until the next look. Where no writer can be seen, it must stay still BLIND_SETTLE_FACTOR times
   * the settle time instead.
   */
  private heldByWriter(file: string, now: number, stillMs: number): number {
    const seen = this.writersOf(file);
    if (seen === undefined) return Math.max(0, this.settleMs() * BLIND_SETTLE_FACTOR - stillMs);
    const writers = seen;
    const since = this.writerWait.get(file);
    if (writers.length === 0) {
      this.writerWait.delete(file);
      return 0;
    }
    const capMs = this.options.writerWaitMs ?? DEFAULT_WRITER_WAIT_MS;
    if (since === undefined) {
      this.writerWait.set(file, now);
      this.options.logger?.info(
        { file, pids: writers },
        'config file changed and is still open for writing; waiting for the writer to close it',
      );
    } else if (now - since >= capMs) {
      this.writerWait.delete(file);
      this.options.logger?.warn(
        { file, pids: writers, waitedMs: Math.round(now - since) },
        `config file still open for writing after ${Math.round(capMs / 1000)} s; loading it anyway (write a temp file and rename it into place instead)`,
      );
      return 0;
    }
    // Each look scans every process's descriptors (tens of ms on a busy host): not too often.
    return Math.min(Math.max(this.settleMs(), WRITER_RECHECK_MS), Math.max(1, (since ?? now) + capMs - now));
  }

  /** Runs `check` within `ms`, or sooner if it is already due sooner. */
  private wakeIn(ms: number): void {
    const at = performance.now() + Math.max(0, ms);
    if (this.timer !== undefined && this.wakeAt <= at) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wakeAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.wakeAt = Infinity;
        this.check();
      },
      Math.max(0, ms),
    );
    this.timer.unref();
  }

  /** Looks at every file; reports what is renamed or settled once nothing is left settling. */
  private check(): void {
    const now = performance.now();
    const settleMs = this.settleMs();
    let nextLook = Infinity;
    for (const file of this.files) {
      const seen = observe(file);
      const last = this.reported.get(file);
      const settling = this.settling.get(file);
      if (seen.print === last?.print) {
        // Back to (or still) what was reported: nothing to report, whatever happened between.
        this.reported.set(file, { print: seen.print, inode: seen.inode });
        this.settling.delete(file);
        this.ready.delete(file);
        this.writerWait.delete(file);
        continue;
      }
      // A different file than the last look found there (not a file that was missing then).
      const before = settling === undefined ? last?.inode : settling.inode;
      const renamed = before !== undefined && seen.inode !== undefined && seen.inode !== before;
      const settled = settling?.state === seen.state && now - settling.since >= settleMs;
      const holdMs = !renamed && settled ? this.heldByWriter(file, now, now - settling.since) : 0;
      if (holdMs > 0) {
        nextLook = Math.min(nextLook, holdMs);
        continue;
      }
      // The writer scan takes a while on a busy host, and a writer may have written and closed
      // meanwhile: publish only bytes that are still what the file holds after the scan.
      if (!renamed && settled && observe(file).print !== seen.print) {
        this.settling.set(file, { state: seen.state, inode: seen.inode, since: performance.now() });
        nextLook = Math.min(nextLook, settleMs);
        continue;
      }
      if (renamed || settled) {
        this.writerWait.delete(file);
        this.reported.set(file, { print: seen.print, inode: seen.inode });
        this.settling.delete(file);
        this.ready.set(file, seen.content);
        continue;
      }
      const since = settling?.state === seen.state ? settling.since : now;
      this.settling.set(file, { state: seen.state, inode: seen.inode, since });
      nextLook = Math.min(nextLook, since + settleMs - now);
    }
    if (nextLook !== Infinity) this.wakeIn(nextLook);
    if (this.settling.size > 0 || this.ready.size === 0) return;
    const read = new Map<string, Buffer>();
    for (const [file, content] of this.ready) if (content !== undefined) read.set(file, content);
    this.ready.clear();
    this.onChange(read);
  }
}

/**
 * A file's bytes with their SHA-256 and the identity of the file they came from (one open file,
 * so bytes and identity agree), or why it cannot be read (so a vanished file is a change, and its
 * return too).
 */
function observe(file: string): Observation {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const stats = fstatSync(fd);
    const content = readFileSync(fd);
    const print = `sha256:${hash('sha256', content, 'hex')}`;
    const inode = `${stats.dev}:${stats.ino}`;
    return { content, print, inode, state: `${print} ${stats.size} ${stats.mtimeMs} ${inode}` };
  } catch (err) {
    const print = `missing:${(err as NodeJS.ErrnoException).code ?? 'error'}`;
    return { content: undefined, print, inode: undefined, state: print };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
