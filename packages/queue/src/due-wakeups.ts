/** One queue to wake at one time (ms since the epoch). */
interface Wakeup {
  at: number;
  queue: string;
}

/**
 * Calls wake(queue) once each registered time has come, one timer for them all. Registering the
 * same queue and time twice wakes it once.
 */
export class DueWakeups {
  /** Sorted by time, earliest first. */
  private readonly pending: Wakeup[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(
    private readonly wake: (queue: string) => void,
    private readonly now: () => number,
  ) {}

  add(queue: string, at: number): void {
    let i = this.pending.length;
    while (i > 0 && (this.pending[i - 1]?.at ?? 0) > at) i -= 1;
    for (let j = i - 1; j >= 0 && this.pending[j]?.at === at; j -= 1)
      if (this.pending[j]?.queue === queue) return;
    this.pending.splice(i, 0, { at, queue });
    if (at < this.timerAt) this.arm();
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    this.pending.length = 0;
  }

  private arm(): void {
    clearTimeout(this.timer);
    const first = this.pending[0];
    if (!first) {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      return;
    }
    this.timerAt = first.at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, first.at - this.now()));
    this.timer.unref();
  }

  private fire(): void {
    const now = this.now();
    const due = new Set<string>();
    while ((this.pending[0]?.at ?? Number.POSITIVE_INFINITY) <= now) {
      const wakeup = this.pending.shift();
      if (wakeup) due.add(wakeup.queue);
    }
    this.arm();
    for (const queue of due) this.wake(queue);
  }
}
