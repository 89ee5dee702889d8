/** The clock and timers a Debouncer uses (injected, so tests run on a fake clock). */
export interface Timers {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock and timers; timers do not keep the process alive. */
export const REAL_TIMERS: Timers = {
  now: () => performance.now(),
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How long a Debouncer waits. */
export interface DebounceTimes {
  /** Run once no change came for this long (ms). */
  readonly quietMs: number;
  /** ...but no later than this after the first change of a burst (ms), so a steady stream still builds. */
  readonly maxWaitMs: number;
}

/**
 * Turns a burst of changes into one run: `changed` (re)starts a quiet-period timer, `run` starts
 * when it fires, and runs never overlap: a change during a run makes exactly one more run once it
 * ends (after its own quiet period). Why: every watched object's change asks for a build, a
 * `kubectl apply` of many objects sends many events at once, and each build is a whole pipeline
 * pass, so the watcher builds once per burst, from the state it has then. A failing `run` is the
 * caller's to report; it does not stop later runs.
 */
export class Debouncer {
  private timer: unknown;
  private burstStart: number | undefined;
  private running: Promise<void> | undefined;
  private pending = false;
  private closed = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly times: DebounceTimes,
    private readonly timers: Timers = REAL_TIMERS,
  ) {}

  /** Something changed: run after the quiet period (see the class comment). */
  changed(): void {
    if (this.closed) return;
    if (this.running !== undefined) {
      this.pending = true;
      return;
    }
    const now = this.timers.now();
    this.burstStart ??= now;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(this.times.quietMs, this.burstStart + this.times.maxWaitMs - now));
    this.timer = this.timers.setTimeout(() => this.fire(), delay);
  }

  /** Settles once no run is going and none is waiting to start (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** Runs nothing more; a run going on finishes. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private fire(): void {
    this.timer = undefined;
    this.burstStart = undefined;
    if (this.closed) return;
    this.running = this.run()
      .catch(() => undefined)
      .finally(() => {
        this.running = undefined;
        if (this.pending) {
          this.pending = false;
          this.changed();
        }
      });
  }
}
