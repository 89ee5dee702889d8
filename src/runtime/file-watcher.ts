import { createHash } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Watches a set of files for content changes, robust to how files really change: editors that
 * write a temp file and rename it over the original, and Kubernetes ConfigMap volumes that swap a
 * `..data` symlink. It watches the parent directories (which see renames and symlink swaps), and
 * decides by content hash, so touching a file without changing it does nothing. A slow poll backs
 * up file systems that emit no events. `onChange` is debounced.
 */
export class FileWatcher {
  private readonly watchers: FSWatcher[] = [];
  private hashes = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private files: string[] = [];

  constructor(
    private readonly onChange: () => void,
    private readonly options: { debounceMs?: number; pollMs?: number } = {},
  ) {}

  /** Replaces the watched set with `files` (absolute or relative to cwd) and records their current content. */
  watch(files: readonly string[]): void {
    this.close();
    this.files = [...new Set(files.map((file) => resolve(file)))];
    this.hashes = new Map(this.files.map((file) => [file, contentHash(file)]));
    for (const directory of new Set(this.files.map((file) => dirname(file)))) {
      try {
        const watcher = watch(directory, { persistent: false }, () => this.schedule());
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
    if (this.poller !== undefined) clearInterval(this.poller);
    this.timer = undefined;
    this.poller = undefined;
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
    for (const file of this.files) {
      const hash = contentHash(file);
      if (hash !== this.hashes.get(file)) {
        this.hashes.set(file, hash);
        changed = true;
      }
    }
    if (changed) this.onChange();
  }
}

function contentHash(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch (err) {
    return `missing:${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
