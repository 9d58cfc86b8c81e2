/**
 * Coalesces calls made while a batch is in flight into the next batch: one store round trip
 * serves many concurrent jobs (group commit), with no timer to wait on when the store is idle.
 */
export class Batcher<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 256,
    private readonly maxInFlight = 1,
  ) {}

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.inFlight < this.maxInFlight) queueMicrotask(() => this.flush());
    });
  }

  private flush(): void {
    if (this.inFlight >= this.maxInFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.maxBatch);
    this.inFlight += 1;
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
        this.inFlight -= 1;
        this.flush();
      });
  }
}
