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
  private readonly running = new Set<Promise<void>>();
  /** How many of them follow each queue's jobs. */
  private readonly perQueue = new Map<string, number>();
  /** And each delivery's, for the sweeper: an answered attempt not yet recorded looks stranded. */
  private readonly perDelivery = new Map<string, number>();
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
    const { queue, deliveryId } = job;
    if (this.running.size >= this.options.max || this.options.now() < this.inlineUntil)
      return writes().catch((error: unknown) => {
        this.failed();
        throw error;
      });
    count(this.perQueue, queue, +1);
    count(this.perDelivery, deliveryId, +1);
    const running: Promise<void> = writes()
      .catch((error: Error) => {
        this.failed();
        this.options.onError(error, job);
      })
      .finally(() => {
        this.running.delete(running);
        count(this.perQueue, queue, -1);
        count(this.perDelivery, deliveryId, -1);
      });
    this.running.add(running);
    return Promise.resolve();
  }

  /** Writes failed: jobs wait for their own for a while, so further failures are theirs. */
  private failed(): void {
    this.inlineUntil = this.options.now() + this.options.inlineAfterFailureMs;
  }

  /** How many writes are pending after their jobs ended. */
  get size(): number {
    return this.running.size;
  }

  /** True while writes that follow a job of this queue are pending: its work is not done. */
  hasPending(queue: string): boolean {
    return this.perQueue.has(queue);
  }

  /** True while writes that follow a job of this delivery are pending: its attempt is unrecorded. */
  isRecording(deliveryId: string): boolean {
    return this.perDelivery.has(deliveryId);
  }

  /** Resolves when every write started so far, and any started meanwhile, is done. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

/** Adds delta to key's count, forgetting the key at zero. */
function count(counts: Map<string, number>, key: string, delta: number): void {
  const next = (counts.get(key) ?? 0) + delta;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}
