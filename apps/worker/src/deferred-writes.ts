/** Whose writes these are: the job's queue and delivery (for the log). */
export interface WritesOf {
  queue: string;
  deliveryId: string;
}

/**
 * The store and queue writes that follow an answer, run after the job has given back its slot:
 * an endpoint's limit then counts requests to it, not our bookkeeping after them (recording an
 * attempt took longer than a quick endpoint's answer, and an endpoint held to one in flight spent
 * most of its slot on it). A job waits for its own writes instead while `max` are pending, so a
 * slow store slows the worker rather than piling answers up in memory, and for a while after
 * writes failed, so a store that refuses writes fails jobs, which BullMQ retries with backoff,
 * rather than leaving attempt after attempt to the sweeper.
 */
export class DeferredWrites {
  /** Pending writes, by the queue whose job they follow. */
  private readonly pending = new Map<string, Set<Promise<void>>>();
  private count = 0;
  private inlineUntil = 0;

  constructor(
    private readonly options: {
      max: number;
      /** How long jobs wait for their own writes after deferred writes failed. */
      inlineAfterFailureMs: number;
      /**
       * Deferred writes failed. Their job is gone: the delivery is pending with no job, and the
       * sweeper puts it back.
       */
      onError: (error: Error, job: WritesOf) => void;
      now: () => number;
    },
  ) {}

  /**
   * Runs the writes that follow a job. Resolves at once when they are deferred; otherwise once
   * they are done, rejecting if they fail (the job fails, and BullMQ runs it again).
   */
  run(job: WritesOf, writes: () => Promise<void>): Promise<void> {
    const { queue } = job;
    if (this.count >= this.options.max || this.options.now() < this.inlineUntil)
      return writes().catch((error: unknown) => {
        this.failed();
        throw error;
      });
    let forQueue = this.pending.get(queue);
    if (!forQueue) {
      forQueue = new Set();
      this.pending.set(queue, forQueue);
    }
    const set = forQueue;
    const running: Promise<void> = writes()
      .catch((error: Error) => {
        this.failed();
        this.options.onError(error, job);
      })
      .finally(() => {
        set.delete(running);
        if (set.size === 0) this.pending.delete(queue);
        this.count -= 1;
      });
    set.add(running);
    this.count += 1;
    return Promise.resolve();
  }

  /** Writes failed: jobs wait for their own for a while, so further failures are theirs. */
  private failed(): void {
    this.inlineUntil = this.options.now() + this.options.inlineAfterFailureMs;
  }

  /** How many writes are pending after their jobs ended. */
  get size(): number {
    return this.count;
  }

  /** True while writes that follow a job of this queue are pending: its work is not done. */
  hasPending(queue: string): boolean {
    return this.pending.has(queue);
  }

  /** Resolves when every write started so far, and any started meanwhile, is done. */
  async drain(): Promise<void> {
    while (this.count > 0) await Promise.allSettled([...this.pending.values()].flatMap((set) => [...set]));
  }
}
