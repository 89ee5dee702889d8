import { hash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/**
 * Watches a set of files for content changes, robust to how files really change: editors that
 * write a temp file and rename it over the original, and Kubernetes ConfigMap volumes that swap a
 * `..data` symlink. It watches the parent directories (which see renames and symlink swaps), and
 * decides by content, so touching a file without changing it does nothing. A slow poll backs up
 * file systems that emit no events.
 *
 * When to look: a rename onto a watched name (an editor's atomic save, a ConfigMap `..data` swap)
 * puts a complete file in place, so it is checked at once; an in-place write may still be under
 * way, so it is debounced (`debounceMs`, default 50) until the writes stop. Events for other
 * files in the directory (an editor's temp file being written) are ignored.
 *
 * It keeps a SHA-256 of each file, not its bytes (a 10,000-route config is ~5 MB), and hands the
 * bytes of the files that changed to `onChange`, so the reload parses what was compared instead of
 * reading the file a second time.
 */
export class FileWatcher {
  private readonly watchers: FSWatcher[] = [];
  /** Per file: the SHA-256 of its bytes, or why it could not be read. */
  private contents = new Map<string, string>();
  private names = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private poller: NodeJS.Timeout | undefined;
  private files: string[] = [];

  constructor(
    private readonly onChange: (changed: ReadonlyMap<string, Buffer>) => void,
    private readonly options: { debounceMs?: number; pollMs?: number } = {},
  ) {}

  /** Replaces the watched set with `files` (absolute or relative to cwd) and records their current content. */
  watch(files: readonly string[]): void {
    const wanted = [...new Set(files.map((file) => resolve(file)))];
    // The same set (every reload of an unchanged file list): keep the watchers and the contents
    // `check` already recorded, rather than reading every file again.
    if (
      this.poller !== undefined &&
      wanted.length === this.files.length &&
      wanted.every((f, i) => f === this.files[i])
    )
      return;
    this.close();
    this.files = wanted;
    this.contents = new Map(this.files.map((file) => [file, fingerprint(contentOf(file))]));
    this.names = new Set([...this.files.map((file) => basename(file)), '..data']);
    for (const directory of new Set(this.files.map((file) => dirname(file)))) {
      try {
        const watcher = watch(directory, { persistent: false }, (event, name) => this.onEvent(event, name));
        watcher.on('error', () => this.schedule());
        this.watchers.push(watcher);
      } catch {
        // A directory that cannot be watched is still covered by the poll.
      }
    }
    this.poller = setInterval(() => this.check(), this.options.pollMs ?? 2000);
    this.poller.unref();
  }

  /** Stops watching. */
  close(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.immediate !== undefined) clearImmediate(this.immediate);
    if (this.poller !== undefined) clearInterval(this.poller);
    this.timer = undefined;
    this.immediate = undefined;
    this.poller = undefined;
  }

  private onEvent(event: string, name: string | Buffer | null): void {
    const file = name === null ? undefined : String(name);
    if (file !== undefined && !this.names.has(file)) return;
    if (event === 'rename' && file !== undefined) {
      // Several events of one save arrive together: look once, after this turn of the loop.
      this.immediate ??= setImmediate(() => {
        this.immediate = undefined;
        this.check();
      });
      return;
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.check();
    }, this.options.debounceMs ?? 50);
    this.timer.unref();
  }

  private check(): void {
    let changed = false;
    const read = new Map<string, Buffer>();
    for (const file of this.files) {
      const content = contentOf(file);
      const print = fingerprint(content);
      if (print !== this.contents.get(file)) {
        this.contents.set(file, print);
        if (typeof content !== 'string') read.set(file, content);
        changed = true;
      }
    }
    if (changed) this.onChange(read);
  }
}

/** What `check` compares: the bytes' SHA-256, or the reason a file could not be read. */
function fingerprint(content: Buffer | string): string {
  return typeof content === 'string' ? content : `sha256:${hash('sha256', content, 'hex')}`;
}

/** A file's bytes, or why it cannot be read (so a vanished file is a change, and its return too). */
function contentOf(file: string): Buffer | string {
  try {
    return readFileSync(file);
  } catch (err) {
    return `missing:${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
