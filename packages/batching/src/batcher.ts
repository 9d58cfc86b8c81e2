/**
 * When a batch counts as slow: after `afterMs` it stops holding back the calls behind it (it runs
 * on, and the next batch may start), with at most `maxRunning` batches running at once.
 */
export interface SlowBatches {
  afterMs: number;
  maxRunning: number;
}

/**
 * Coalesces calls made while a batch is in flight into the next batch: one store round trip
 * serves many concurrent jobs (group commit), with no timer to wait on when the store is idle.
 */
export class Batcher<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  /** Batches holding one of the maxInFlight places: running, and not yet slow. */
  private inFlight = 0;
  private running = 0;
  /** A start is set for the end of this turn: later calls of the turn join it, not set another. */
  private startScheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 256,
    private readonly maxInFlight = 1,
    private readonly slow?: SlowBatches,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // At the end of this turn of the event loop, not at the first call's next microtask: calls
      // handled in one turn (requests read from one socket, jobs that started together) share a
      // batch. From a microtask the first of them went alone, and the rest waited for it: timed
      // in the api, Emit's statements ran 1 and 63 calls by turns under 64 calls in flight.
      if (this.inFlight < this.maxInFlight && !this.startScheduled) {
        this.startScheduled = true;
        setImmediate(() => {
          this.startScheduled = false;
          while (this.startBatch()) {}
        });
      }
    });
  }

  /** Starts the next batch if a place is free; false when none was started. */
  private startBatch(): boolean {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return false;
    if (this.slow && this.running >= this.slow.maxRunning) return false;
    const batch = this.pending.splice(0, this.maxBatch);
    this.inFlight += 1;
    this.running += 1;
    let holdsPlace = true;
    const giveUpPlace = () => {
      if (!holdsPlace) return;
      holdsPlace = false;
      this.inFlight -= 1;
    };
    const slowTimer =
      this.slow &&
      setTimeout(() => {
        giveUpPlace();
        this.startBatch();
      }, this.slow.afterMs);
    this.run(batch.map((entry) => entry.item))
      .then(
        (results) => {
          for (const [i, entry] of batch.entries()) entry.resolve(results[i] as O);
        },
        (error: unknown) => {
          for (const entry of batch) entry.reject(error);
        },
      )
      .finally(() => {
        clearTimeout(slowTimer);
        giveUpPlace();
        this.running -= 1;
        this.startBatch();
      });
    return true;
  }
}
