import type { AttemptFilter, AttemptRecord, StoreDb } from "@hookline/store";
import { attemptsAfter, lastAttemptId, matchesAttemptFilter } from "@hookline/store";
import { attemptIdForStore, attemptIdFromStore } from "./attempt-id.js";

/** Where the feed reads attempts from; `storeAttemptSource(db)` is the PostgreSQL one. */
export interface AttemptSource {
  /** The id of the newest attempt (0 when there is none). */
  lastId(): Promise<bigint>;
  /** Up to limit attempts with ids above after, in id order. */
  after(after: bigint, limit: number): Promise<AttemptRecord[]>;
}

/** Reads every tenant's attempts from the store; the feed filters them per subscription. */
export function storeAttemptSource(db: StoreDb): AttemptSource {
  return {
    lastId: async () => attemptIdFromStore(await lastAttemptId(db)),
    after: (after, limit) => attemptsAfter(db, {}, attemptIdForStore(after), limit),
  };
}

/**
 * A subscription to the feed. It starts catching up (dropping what it is offered: the caller reads
 * those from the store) and buffers, up to a bound, once the caller switches it to live.
 */
export interface FeedSubscription extends AsyncIterable<AttemptRecord> {
  /** Buffers every attempt offered from now on whose id is above coveredUpTo (the caller sent those). */
  goLive(coveredUpTo: bigint): void;
  close(): void;
}

export class FeedOverflowError extends Error {
  constructor(readonly limit: string) {
    super(`the client fell more than ${limit} behind`);
    this.name = "FeedOverflowError";
  }
}

/** Bytes one subscriber may hold unread, whatever the row limit: attempts carry response bodies. */
export const LIVE_BUFFER_BYTES = 1024 * 1024;

/** Roughly what an attempt held in memory weighs (strings count two bytes a character at most). */
function attemptBytes(attempt: AttemptRecord): number {
  return 2 * (attempt.responseBody.length + attempt.error.length) + 512;
}

/**
 * One reader of new attempts per api process, shared by every WatchAttempts stream: on each
 * signal (or a slow safety poll) it reads the attempts after its position, in id order, and hands
 * each to the subscriptions whose filter it matches.
 */
export class AttemptFeed {
  private position = 0n;
  private readonly subscriptions = new Set<Subscription>();
  private reading: Promise<void> | undefined;
  private again = false;
  /** The first read of the newest id; undefined again after it failed, so a later subscribe retries. */
  private started: Promise<void> | undefined;
  private poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: AttemptSource,
    private readonly options: { bufferLimit: number; safetyPollMs: number },
  ) {
    this.started = this.readStart();
  }

  private readStart(): Promise<void> {
    const reading = this.source.lastId().then((id) => {
      this.position = id;
    });
    // Its failure is the subscriber's that awaits it (a store away at start, or closed meanwhile),
    // never an unhandled rejection, and not every later subscriber's.
    reading.catch(() => {
      if (this.started === reading) this.started = undefined;
    });
    return reading;
  }

  /** The id of the last attempt handed to subscribers: everything after it is still to come. */
  get lastId(): bigint {
    return this.position;
  }

  async subscribe(filter: AttemptFilter, signal: AbortSignal): Promise<FeedSubscription> {
    this.started ??= this.readStart();
    await this.started;
    // An idle feed reads nothing, so its position may be old: catch it up, or a new stream that
    // asked for "only new attempts" would be handed ones recorded while nobody was watching.
    if (this.subscriptions.size === 0 && !this.reading) {
      const latest = await this.source.lastId();
      if (this.subscriptions.size === 0 && !this.reading && latest > this.position) this.position = latest;
    }
    const subscription = new Subscription(filter, this.options.bufferLimit, signal, () => {
      this.subscriptions.delete(subscription);
      if (this.subscriptions.size === 0) this.stopPolling();
    });
    this.subscriptions.add(subscription);
    this.startPolling();
    return subscription;
  }

  get openStreams(): number {
    return this.subscriptions.size;
  }

  /** New attempts may exist: read them (coalescing signals that arrive meanwhile). */
  wake(): void {
    if (this.subscriptions.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readAll()
      .catch(() => {})
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  close(): void {
    this.stopPolling();
    for (const subscription of this.subscriptions) subscription.close();
  }

  private async readAll(): Promise<void> {
    for (;;) {
      // A page never exceeds one subscriber's buffer, so a reader that keeps up never overflows.
      const pageSize = Math.min(1000, this.options.bufferLimit);
      const page = await this.source.after(this.position, pageSize);
      // Broadcast synchronously with the position update, so a subscriber that joins between
      // pages starts exactly where the last delivered batch ended.
      for (const attempt of page) {
        for (const subscription of this.subscriptions) subscription.offer(attempt);
        this.position = attemptIdFromStore(attempt.id);
      }
      if (page.length < pageSize) return;
    }
  }

  private startPolling(): void {
    // Signals can be lost (a LISTEN connection that dropped); a slow poll bounds the delay.
    this.poll ??= setInterval(() => this.wake(), this.options.safetyPollMs);
    this.poll.unref();
  }

  private stopPolling(): void {
    clearInterval(this.poll);
    this.poll = undefined;
  }
}

class Subscription implements FeedSubscription {
  private readonly buffer: AttemptRecord[] = [];
  private bufferedBytes = 0;
  private waiter: (() => void) | undefined;
  private failure: Error | undefined;
  private closed = false;
  private live = false;
  private floor = 0n;

  constructor(
    private readonly filter: AttemptFilter,
    private readonly limit: number,
    private readonly signal: AbortSignal,
    private readonly onClose: () => void,
  ) {
    signal.addEventListener("abort", () => this.close(), { once: true });
  }

  goLive(coveredUpTo: bigint): void {
    this.floor = coveredUpTo;
    this.live = true;
  }

  offer(attempt: AttemptRecord): void {
    if (
      this.closed ||
      !this.live ||
      !matchesAttemptFilter(this.filter, attempt) ||
      attemptIdFromStore(attempt.id) <= this.floor
    )
      return;
    const bytes = attemptBytes(attempt);
    if (this.buffer.length >= this.limit || this.bufferedBytes + bytes > LIVE_BUFFER_BYTES) {
      this.failure = new FeedOverflowError(
        this.buffer.length >= this.limit
          ? `${this.limit} attempts`
          : `${LIVE_BUFFER_BYTES / 1024} KiB of attempts`,
      );
      this.close();
      return;
    }
    this.bufferedBytes += bytes;
    this.buffer.push(attempt);
    this.wakeReader();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    // Free the buffer now, not when a stalled client finally goes away: after an overflow the
    // client resumes from the last attempt it was sent, so nothing buffered is lost.
    this.buffer.length = 0;
    this.bufferedBytes = 0;
    this.wakeReader();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AttemptRecord> {
    try {
      for (;;) {
        const next = this.buffer.shift();
        if (next) {
          this.bufferedBytes -= attemptBytes(next);
          yield next;
          continue;
        }
        if (this.failure) throw this.failure;
        if (this.closed || this.signal.aborted) return;
        await new Promise<void>((resolve) => {
          this.waiter = resolve;
        });
      }
    } finally {
      this.close();
    }
  }

  private wakeReader(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }
}
