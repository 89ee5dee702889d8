import { hash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** How long an in-place change must stay the same before it is reported, unless told otherwise. */
export const DEFAULT_SETTLE_MS = 1000;

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

  constructor(
    private readonly onChange: (changed: ReadonlyMap<string, Buffer>) => void,
    private readonly options: { settleMs?: number; pollMs?: number } = {},
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
        continue;
      }
      // A different file than the last look found there (not a file that was missing then).
      const before = settling === undefined ? last?.inode : settling.inode;
      const renamed = before !== undefined && seen.inode !== undefined && seen.inode !== before;
      if (renamed || (settling?.state === seen.state && now - settling.since >= settleMs)) {
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
