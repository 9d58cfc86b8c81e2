export interface HealthMonitorOptions {
  /** A probe slower than this counts as a failure (Kubernetes gives a gRPC probe 1 s by default). */
  timeoutMs: number;
  /** A result this recent answers a Check without probing again. */
  maxAgeMs: number;
  /** How often to probe while someone watches. */
  watchIntervalMs: number;
  now?: () => number;
}

export const DEFAULT_HEALTH_OPTIONS: HealthMonitorOptions = {
  timeoutMs: 800,
  maxAgeMs: 1000,
  watchIntervalMs: 1000,
};

/**
 * Whether a dependency (the store) answers, probed on demand for Check and on a timer while anyone
 * watches. At most one probe runs at a time, so a hung database cannot pile up probes.
 */
export class HealthMonitor {
  private last: { healthy: boolean; at: number } | undefined;
  private inFlight: Promise<boolean> | undefined;
  private changed = deferred();
  private watchers = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly probe: () => Promise<boolean>,
    private readonly options: HealthMonitorOptions = DEFAULT_HEALTH_OPTIONS,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** The current answer: a recent result, else a fresh probe (false if it does not answer in time). */
  async check(): Promise<boolean> {
    if (this.last && this.now() - this.last.at < this.options.maxAgeMs) return this.last.healthy;
    this.inFlight ??= this.probe()
      .catch(() => false)
      .then((healthy) => {
        this.inFlight = undefined;
        this.record(healthy);
        return healthy;
      });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.timeoutMs);
    });
    const healthy = await Promise.race([this.inFlight, timedOut]);
    clearTimeout(timer);
    if (!healthy) this.record(false);
    return healthy;
  }

  /** Yields the current answer, then each change, until the signal aborts. */
  async *watch(signal: AbortSignal): AsyncGenerator<boolean> {
    if (this.watchers++ === 0) {
      this.timer = setInterval(() => void this.check(), this.options.watchIntervalMs);
      this.timer.unref();
    }
    const aborted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    try {
      let sent = await this.check();
      yield sent;
      while (!signal.aborted) {
        const current = this.last?.healthy ?? sent;
        if (current !== sent) {
          sent = current;
          yield sent;
          continue;
        }
        await Promise.race([this.changed.promise, aborted]);
      }
    } finally {
      if (--this.watchers === 0) clearInterval(this.timer);
    }
  }

  private record(healthy: boolean): void {
    const before = this.last?.healthy;
    this.last = { healthy, at: this.now() };
    if (before !== healthy) {
      const { resolve } = this.changed;
      this.changed = deferred();
      resolve();
    }
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
