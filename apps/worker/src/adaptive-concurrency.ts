import { type AttemptOutcome, loadSignalOf } from "@hookline/delivery";
import { AdaptiveLimit, type LimitsWrite, type QueueLimits } from "@hookline/queue";

export interface AdaptiveConcurrencyDeps {
  /** The ceiling (HOOKLINE_ENDPOINT_MAX_CONCURRENCY); the floor is 1. */
  max: number;
  now(): number;
  /** The queue's global concurrency as the last writer (any worker process) left it. */
  readConcurrency(queue: string): Promise<number | undefined>;
  /** The queue's jobs in flight now, across every worker process. */
  readInFlight(queue: string): Promise<number>;
  /** Writes limits into a queue (the producer's handles). */
  writeQueueLimits(queue: string, limits: QueueLimits, how?: LimitsWrite): Promise<void>;
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
  /** A read of the queue's attempts in flight across processes is under way (see readUse). */
  readingUse: boolean;
  /** No such read before then (see readUse). */
  nextUseReadAt: number;
  /** The queue's writes, one after another (see writeQueueLimits). */
  writes: Promise<void>;
  /** The origin of the endpoint's URL the limit is learned against; undefined until known. */
  origin: string | undefined;
  /**
   * Made afresh as the endpoint moved to another server: its first write takes from the queue only
   * a higher limit (a process already learning the new server), never a lower one as a cut.
   */
  moved: boolean;
}

/** How often limits of queues no longer open here are dropped. */
const PRUNE_EVERY_MS = 10_000;
/** The least time between two reads of a queue's attempts in flight across processes. */
const USE_READ_EVERY_MS = 1_000;
/** ...and after one that found this process alone at the queue. */
const USE_READ_ALONE_MS = 30_000;

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
   * written over the endpoint's max_in_flight. So does one whose endpoint's URL now names another
   * origin (`origin`, when known): another server, whose capacity and latency the old one's say
   * nothing of. It starts again from the start, written over the old server's limit in the queue.
   */
  resolve(queue: string, limits: QueueLimits, origin?: string): QueueLimits {
    if (!limits.adaptive) {
      this.entries.delete(queue);
      return limits;
    }
    const known = this.entries.get(queue);
    if (known && origin !== undefined && known.origin !== undefined && known.origin !== origin) {
      this.entries.delete(queue);
      this.entry(queue, limits).moved = true;
    }
    const entry = this.entry(queue, limits);
    entry.origin = origin ?? entry.origin;
    return { ...limits, maxInFlight: entry.limiter.limit };
  }

  /**
   * Writes limits into a queue (the consumer's writer), one write at a time per queue, each after
   * reading what the queue holds: the first starts from the limit learned by whichever process
   * served the queue last; later ones keep a cut another process made since (a 429 it got) and
   * follow a rise beyond this one's. The read and the write are two steps, not one: a cut another
   * process writes between them is lost, until the endpoint's next overload cuts again.
   */
  async writeQueueLimits(queue: string, limits: QueueLimits, how?: LimitsWrite): Promise<void> {
    if (!limits.adaptive) {
      this.entries.delete(queue);
      return this.deps.writeQueueLimits(queue, limits, how);
    }
    const entry = this.entry(queue, limits);
    const write = entry.writes.then(() => this.reconcileAndWrite(queue, entry, limits, how));
    entry.writes = write.catch(() => {});
    return write;
  }

  private async reconcileAndWrite(
    queue: string,
    entry: Entry,
    limits: QueueLimits,
    how: LimitsWrite | undefined,
  ): Promise<void> {
    const shared = await this.deps.readConcurrency(queue);
    // Forgotten meanwhile (the endpoint set its own limit, or moved): what it learned is not to write.
    if (this.entries.get(queue) !== entry) return;
    const adopted = reconcile(entry, shared);
    entry.known = entry.limiter.limit;
    await this.deps.writeQueueLimits(queue, { ...limits, maxInFlight: entry.limiter.limit }, how);
    // The consumer enforces what it was given: it applies the adopted limit too.
    if (adopted) this.changed(queue, entry);
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

  /**
   * Asks the queue how many of its attempts are in flight across processes (see AdaptiveLimit): at
   * most once a second per queue, and once in 30 s after the answer showed no other process at it
   * (a single worker process, whose own count already said all).
   */
  private async readUse(queue: string, entry: Entry): Promise<void> {
    const now = this.deps.now();
    if (entry.readingUse || now < entry.nextUseReadAt || entry.limiter.limit >= this.deps.max) return;
    entry.readingUse = true;
    const here = entry.inFlight;
    try {
      const inFlight = await this.deps.readInFlight(queue);
      const alone = inFlight <= here;
      entry.nextUseReadAt = now + (alone ? USE_READ_ALONE_MS : USE_READ_EVERY_MS);
      if (entry.limiter.usedAcrossProcesses(inFlight)) this.changed(queue, entry);
    } catch {
      // The queue backend is away: a later window asks again.
      entry.nextUseReadAt = now + USE_READ_EVERY_MS;
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
        nextUseReadAt: 0,
        writes: Promise.resolve(),
        origin: undefined,
        moved: false,
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

/**
 * Takes into this process's limit what others wrote into the queue since it last read or wrote
 * it; true when its limit changed. The first read starts from the queue's limit (after a move to
 * another server, only from a higher one); a lower one is another process's cut, which stands; a
 * higher one, while this process is not cutting, is a rise it learned, which this one follows.
 */
function reconcile(entry: Entry, shared: number | undefined): boolean {
  const { limiter, known, moved } = entry;
  entry.moved = false;
  if (shared === undefined) return false;
  if (moved) return shared > limiter.limit && limiter.adopt(shared);
  if (known === undefined) return limiter.adopt(shared);
  // Cut by a process that was overloaded at about the limit this one last knew.
  if (shared < known) return limiter.adoptCut(shared, known);
  if (shared > known && shared > limiter.limit && limiter.limit >= known) return limiter.adopt(shared);
  return false;
}
