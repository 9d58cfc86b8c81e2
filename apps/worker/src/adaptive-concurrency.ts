import { type AttemptOutcome, loadSignalOf } from "@hookline/delivery";
import { AdaptiveLimit, type QueueLimits } from "@hookline/queue";

export interface AdaptiveConcurrencyDeps {
  /** The ceiling (HOOKLINE_ENDPOINT_MAX_CONCURRENCY); the floor is 1. */
  max: number;
  now(): number;
  /** The queue's global concurrency as the last writer (any worker process) left it. */
  readConcurrency(queue: string): Promise<number | undefined>;
  /** The queue's jobs in flight now, across every worker process. */
  readInFlight(queue: string): Promise<number>;
  /** Writes limits into a queue (the producer's handles). */
  writeQueueLimits(queue: string, limits: QueueLimits): Promise<void>;
  /** The queue's limit changed: the consumer applies it (locally and in the queue). */
  apply(queue: string, limits: QueueLimits): void;
  /** True while the queue is open in this process; others are forgotten (the queue keeps the limit). */
  isOpen(queue: string): boolean;
}

interface Entry {
  limiter: AdaptiveLimit;
  /** The queue's limits as the store gives them (the rate), with adaptive set. */
  base: QueueLimits;
  /**
   * The limit in the queue as this process last read or wrote it; undefined until it first read
   * it, where other worker processes left it.
   */
  known: number | undefined;
  inFlight: number;
  /** A read of the queue's attempts in flight across processes is under way (see track). */
  readingUse: boolean;
}

/** How often limits of queues no longer open here are dropped. */
const PRUNE_EVERY_MS = 10_000;

/**
 * The adaptive limits of the queues this process serves. Each queue's limit lives in the queue
 * itself as its BullMQ global concurrency, so it holds across every worker process: a process
 * that opens a queue starts from the limit found there, and writes each change it learns back.
 * Processes serving one endpoint see the same answers, so their limits move together; a rise
 * reads the queue before it is written (see writeQueueLimits), and a process holding less than
 * half the limit asks the queue whether the others fill it (see readUse).
 */
export class AdaptiveConcurrency {
  private readonly entries = new Map<string, Entry>();
  private readonly pruner: NodeJS.Timeout;

  constructor(private readonly deps: AdaptiveConcurrencyDeps) {
    this.pruner = setInterval(() => this.prune(), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  /**
   * The limits to enforce: an adaptive queue's with its current learned concurrency. A queue
   * whose endpoint now sets its own limit forgets what it learned: kept, its next lesson would be
   * written over the endpoint's max_in_flight.
   */
  resolve(queue: string, limits: QueueLimits): QueueLimits {
    if (!limits.adaptive) {
      this.entries.delete(queue);
      return limits;
    }
    return { ...limits, maxInFlight: this.entry(queue, limits).limiter.limit };
  }

  /**
   * Writes limits into a queue (the consumer's writer). The first write of an adaptive queue
   * starts from the limit already in the queue, learned by whichever process served it last. A
   * rise learned here reads the queue first: another process serving it may have cut the limit
   * since (a 429 it got), which the rise must not undo, or raised it further, which this process
   * then follows. Cuts are written as they are.
   */
  async writeQueueLimits(queue: string, limits: QueueLimits): Promise<void> {
    if (!limits.adaptive) {
      this.entries.delete(queue);
      return this.deps.writeQueueLimits(queue, limits);
    }
    const entry = this.entry(queue, limits);
    let adopted = false;
    if (entry.known === undefined || entry.limiter.limit > entry.known) {
      const shared = await this.deps.readConcurrency(queue);
      const moved =
        entry.known === undefined ||
        (shared !== undefined && (shared < entry.known || shared > entry.limiter.limit));
      if (shared !== undefined && moved) adopted = entry.limiter.adopt(shared);
    }
    entry.known = entry.limiter.limit;
    await this.deps.writeQueueLimits(queue, { ...limits, maxInFlight: entry.limiter.limit });
    // The consumer was given another value: it applies the adopted limit locally too.
    if (adopted) this.deps.apply(queue, this.resolve(queue, entry.base));
  }

  /** Runs one attempt of an adaptive queue's job and learns from its answer. */
  async track(queue: string, attempt: () => Promise<AttemptOutcome | undefined>): Promise<void> {
    const entry = this.entries.get(queue);
    if (!entry) {
      await attempt();
      return;
    }
    entry.inFlight += 1;
    const startedAt = this.deps.now();
    const sentUnder = entry.limiter.current;
    const inFlight = entry.inFlight;
    try {
      const outcome = await attempt();
      if (!outcome) return;
      const sample = {
        startedAt,
        sentUnder,
        latencyMs: outcome.durationMs,
        signal: loadSignalOf(outcome),
        inFlight,
      };
      if (entry.limiter.observe(sample)) this.changed(queue, entry);
      else if (entry.limiter.wantsUseAcrossProcesses) void this.readUse(queue, entry);
    } finally {
      entry.inFlight -= 1;
    }
  }

  /** The current limit of every adaptive queue open here (for the metrics gauge). */
  limits(): { queue: string; limit: number }[] {
    this.prune();
    return [...this.entries].map(([queue, entry]) => ({ queue, limit: entry.limiter.limit }));
  }

  close(): void {
    clearInterval(this.pruner);
  }

  private changed(queue: string, entry: Entry): void {
    if (this.entries.get(queue) === entry) this.deps.apply(queue, this.resolve(queue, entry.base));
  }

  /** Asks the queue how many of its attempts are in flight across processes (see AdaptiveLimit). */
  private async readUse(queue: string, entry: Entry): Promise<void> {
    if (entry.readingUse) return;
    entry.readingUse = true;
    try {
      if (entry.limiter.usedAcrossProcesses(await this.deps.readInFlight(queue))) this.changed(queue, entry);
    } catch {
      // The queue backend is away: the next window asks again.
    } finally {
      entry.readingUse = false;
    }
  }

  private entry(queue: string, limits: QueueLimits): Entry {
    let entry = this.entries.get(queue);
    if (!entry) {
      const settings = { floor: 1, start: Math.min(limits.maxInFlight, this.deps.max), max: this.deps.max };
      entry = {
        limiter: new AdaptiveLimit(settings, this.deps.now),
        base: limits,
        known: undefined,
        inFlight: 0,
        readingUse: false,
      };
      this.entries.set(queue, entry);
    }
    entry.base = limits;
    return entry;
  }

  private prune(): void {
    for (const [queue, entry] of this.entries)
      if (entry.inFlight === 0 && !this.deps.isOpen(queue)) this.entries.delete(queue);
  }
}
