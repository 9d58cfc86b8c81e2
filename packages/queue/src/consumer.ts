import { type Job, Worker } from "bullmq";
import type { QueueBackend } from "./backend.js";
import type { ConsumerOptions, DeliveryProcessor, QueueDemand } from "./consumer-options.js";
import { DueWakeups } from "./due-wakeups.js";
import { openWorker, wakeWorker } from "./handles.js";
import { stillHeld } from "./held-job.js";
import { type LimitsWrite, outageWait } from "./limits.js";
import { canYield, OPEN_AHEAD_MS, type OpenQueue, sameLimits } from "./open-queue.js";
import { LIMITS_FAILED, LIMITS_UNWRITTEN, rateInPlace } from "./open-queue-limits.js";
import { ReleaseLog } from "./release-log.js";
import type { DeliveryJobData, EndpointRef, QueueLimits } from "./routing.js";
import { closeWorker, WorkerStillClosingError } from "./worker-close.js";

/** How long a queue waits after one of its jobs found the store away (ConsumerOptions.isOutage). */
const OUTAGE_WAIT_MS = 5000;

/**
 * Serves delivery queues on demand: a BullMQ Worker is opened for a queue only while it has work
 * due, and closed when idle, so an endpoint costs nothing between deliveries. At most
 * maxOpenQueues are open; when more have work, busy queues take turns. Each queue's limits live
 * in the queue itself (global concurrency and rate limit), written before its Worker starts, so
 * they hold across every worker process.
 */
export class DeliveryConsumer {
  private readonly open = new Map<string, OpenQueue>();
  /** Due now, waiting for a place; insertion order is the order they get one. */
  private readonly waiting = new Map<string, QueueDemand>();
  /** Due later: opened by the timer. */
  private readonly later = new Map<string, QueueDemand>();
  private readonly closing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly reaper: NodeJS.Timeout;
  /**
   * Open queues' delayed jobs (retries, mostly): their Workers are woken when each comes due. Only
   * on Redis: the PostgreSQL backend's Workers time that wait themselves (see wakeWorker).
   */
  private readonly wakeups: DueWakeups | undefined;
  private closed = false;
  private readonly now: () => number;
  private readonly releases = new ReleaseLog();

  constructor(
    private readonly backend: QueueBackend,
    private readonly processor: DeliveryProcessor,
    private readonly options: ConsumerOptions,
    /** Writes a queue's limits into it (the producer, whose queue handles are already open). */
    private readonly limits: {
      writeQueueLimits(queue: string, limits: QueueLimits, how?: LimitsWrite): Promise<void>;
    },
  ) {
    this.now = options.now ?? Date.now;
    this.wakeups =
      backend.kind === "redis" ? new DueWakeups((queue) => this.wake(queue), this.now) : undefined;
    this.reaper = setInterval(
      () => this.tick(),
      Math.max(50, Math.min(options.idleCloseMs, options.turnMs) / 4),
    );
    this.reaper.unref();
    // A Redis that restarted empty lost every queue's limits: write them again before the
    // sweeper puts the lost jobs back.
    backend.onReconnect(() => {
      for (const [name, open] of this.open) this.applyLimits(name, open, open.limits, true);
    });
  }

  /**
   * Taken just before reading the store for a demand(). A queue released after it is not opened
   * again by what that read found: the read may predate the release, and have seen as pending the
   * deliveries whose jobs the closing Worker went on to take. Reopening it then costs a Worker that
   * finds nothing (and in a fan-out, a place other queues wait for). A read begun after the release
   * opens it, as does the news of a job added to it; so work it really has waits one scan at most.
   */
  readMark(): number {
    return this.releases.mark();
  }

  /**
   * Says which queues have work and when it is due; opens them now or when due. readMark: taken
   * before reading the store for these items (see readMark); without it, every item counts.
   */
  demand(items: Iterable<QueueDemand>, readMark?: number): void {
    if (this.closed) return;
    const now = this.now();
    for (const item of items) {
      const open = this.open.get(item.queue);
      if (open) {
        this.applyLimits(item.queue, open, item.limits);
        if (item.dueAt <= now + this.options.idleCloseMs) {
          open.keepUntil = Math.max(open.keepUntil, item.dueAt + OPEN_AHEAD_MS);
          if (item.dueAt > now) this.wakeups?.add(item.queue, item.dueAt);
        } else this.addLater(item);
        // Overdue, yet nothing for us to take: its job is active elsewhere, maybe in a dead
        // worker. Stay open long enough for BullMQ's stalled check (two passes) to free it.
        if (
          open.drained &&
          open.inFlight === 0 &&
          item.dueAt < now - OPEN_AHEAD_MS &&
          !this.options.writesPending?.(item.queue)
        )
          open.stalledWatchUntil = Math.max(open.stalledWatchUntil, now + this.options.stalledAfterMs * 1.5);
        continue;
      }
      const known = this.waiting.get(item.queue);
      // Stale news of a queue that closed after the read began: the next read sees what it has.
      if (!known && readMark !== undefined && this.releases.releasedAfter(item.queue, readMark)) continue;
      if (known) {
        known.limits = item.limits;
      } else if (item.dueAt <= now + OPEN_AHEAD_MS) {
        this.later.delete(item.queue);
        this.waiting.set(item.queue, item);
      } else {
        this.addLater(item);
      }
    }
    this.pump();
    this.armTimer();
  }

  /**
   * True when the queue is open here and will stay open until dueAt (kept open for it when that is
   * soon): its new jobs need no other news.
   */
  hasOpen(queue: string, dueAt: number): boolean {
    const open = this.open.get(queue);
    const now = this.now();
    if (!open || dueAt > now + this.options.idleCloseMs) return false;
    open.keepUntil = Math.max(open.keepUntil, dueAt + OPEN_AHEAD_MS);
    if (dueAt > now) this.wakeups?.add(queue, dueAt);
    return true;
  }

  /** The endpoints whose queues are open here: their limits are re-read on every scan. */
  openEndpoints(): { queue: string; endpoint: EndpointRef }[] {
    const list = [];
    for (const [queue, open] of this.open) if (open.endpoint) list.push({ queue, endpoint: open.endpoint });
    return list;
  }

  /** New limits for open queues (their endpoints were updated). */
  updateLimits(changes: Iterable<{ queue: string; limits: QueueLimits }>): void {
    for (const { queue, limits } of changes) {
      const open = this.open.get(queue);
      if (open) this.applyLimits(queue, open, limits);
    }
  }

  /** True while the queue has a Worker open in this process. */
  isOpen(queue: string): boolean {
    return this.open.has(queue);
  }

  /** Queues with a Worker open in this process now. */
  get openQueueCount(): number {
    return this.open.size;
  }

  /** Queues waiting for a place, due now. */
  get waitingQueueCount(): number {
    return this.waiting.size;
  }

  /** Waits until every open Worker is connected and polling. */
  async ready(): Promise<void> {
    await Promise.all([...this.open.values()].map((q) => q.worker.waitUntilReady()));
  }

  /** Stops taking jobs and waits for in-flight ones to finish. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.reaper);
    clearTimeout(this.timer);
    this.wakeups?.close();
    this.waiting.clear();
    this.later.clear();
    for (const name of [...this.open.keys()]) this.release(name);
    while (this.closing.size > 0) await Promise.allSettled([...this.closing]);
  }

  /** A delayed job of an open queue came due: its Worker looks for it now. */
  private wake(queue: string): void {
    const open = this.open.get(queue);
    if (open)
      wakeWorker(this.backend, open.worker).catch((error: Error) => this.options.onError?.(error, queue));
  }

  private addLater(item: QueueDemand): void {
    const known = this.later.get(item.queue);
    if (!known || item.dueAt < known.dueAt) this.later.set(item.queue, item);
  }

  private tick(): void {
    if (this.closed) return;
    const now = this.now();
    for (const [name, open] of this.open) {
      if (
        open.inFlight === 0 &&
        now - open.lastBusyAt >= this.options.idleCloseMs &&
        now >= open.keepUntil &&
        now >= open.stalledWatchUntil
      )
        this.release(name);
      else if (open.limitsGeneration !== this.backend.connectionGeneration())
        // A Redis that restarted empty lost the queue's limits: write them again.
        this.applyLimits(name, open, open.limits, true);
    }
    this.promoteDue(now);
    this.pump();
    this.releases.prune(now);
  }

  private promoteDue(now: number): void {
    for (const [name, item] of this.later) {
      if (item.dueAt > now + OPEN_AHEAD_MS) continue;
      this.later.delete(name);
      const open = this.open.get(name);
      if (open) {
        open.keepUntil = Math.max(open.keepUntil, item.dueAt + OPEN_AHEAD_MS);
        if (item.dueAt > now) this.wakeups?.add(name, item.dueAt);
      } else if (!this.waiting.has(name)) this.waiting.set(name, item);
    }
  }

  private armTimer(): void {
    clearTimeout(this.timer);
    let next = Number.POSITIVE_INFINITY;
    for (const item of this.later.values()) next = Math.min(next, item.dueAt);
    if (next === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(
      () => {
        this.promoteDue(this.now());
        this.pump();
        this.armTimer();
      },
      Math.max(0, next - OPEN_AHEAD_MS - this.now()),
    );
    this.timer.unref();
  }

  /** Opens waiting queues while there is room, making room from idle queues, then by turns. */
  private pump(): void {
    while (!this.closed && this.waiting.size > 0) {
      if (this.open.size >= this.options.maxOpenQueues && !this.makeRoom()) return;
      const [name, item] = this.waiting.entries().next().value as [string, QueueDemand];
      this.waiting.delete(name);
      this.start(item);
    }
  }

  private makeRoom(): boolean {
    const now = this.now();
    let idle: string | undefined;
    let longest: [string, OpenQueue] | undefined;
    for (const [name, open] of this.open) {
      if (canYield(open, now, this.options.idleCloseMs)) {
        idle = name;
        break;
      }
      if (now - open.openedAt >= this.options.turnMs && (!longest || open.openedAt < longest[1].openedAt))
        longest = [name, open];
    }
    if (idle !== undefined) {
      this.release(idle);
      return true;
    }
    if (longest) {
      // Its turn is over: it goes to the back of the line, with whatever it still has queued.
      const [name, open] = longest;
      this.release(name);
      this.waiting.set(name, { queue: name, dueAt: now, limits: open.limits, endpoint: open.endpoint });
      return true;
    }
    return false;
  }

  private start(item: QueueDemand): void {
    const now = this.now();
    const worker = openWorker<DeliveryJobData>(
      this.backend,
      item.queue,
      async (job: Job<DeliveryJobData>, token?: string) => {
        // This Worker's own entry, though released: its close waits on the count (closeWorker).
        entry.inFlight += 1;
        entry.served += 1;
        entry.drained = false;
        const held = () => stillHeld(this.backend, job, token, this.options.stalledAfterMs);
        try {
          await this.processor(job.data, item.queue, held);
        } catch (error) {
          if (!this.options.isOutage?.(error)) throw error;
          this.options.onOutage?.(error, item.queue);
          await worker.rateLimit(outageWait(this.options.outageWaitMs ?? OUTAGE_WAIT_MS, entry.limits));
          throw Worker.RateLimitError();
        } finally {
          entry.inFlight -= 1;
          entry.lastBusyAt = this.now();
        }
      },
      {
        concurrency: item.limits.maxInFlight,
        lockDuration: this.options.stalledAfterMs,
        stalledInterval: Math.round(this.options.stalledAfterMs / 2),
        maxStalledCount: 5,
        // Opened only after its limits are written (below), so no job runs without them.
        autorun: false,
      },
    );
    worker.on("error", (error) => this.options.onError?.(error, item.queue));
    worker.on("stalled", (jobId) => this.options.onStalled?.(jobId, item.queue));
    worker.on("failed", (job, error) => this.options.onJobFailed?.(job?.id ?? "", error, item.queue));
    const entry: OpenQueue = {
      worker,
      endpoint: item.endpoint,
      limits: item.limits,
      limitsGeneration: LIMITS_UNWRITTEN,
      rateWrittenAt: now,
      inFlight: 0,
      openedAt: now,
      lastBusyAt: now,
      keepUntil: item.dueAt + OPEN_AHEAD_MS,
      stalledWatchUntil: 0,
      served: 0,
      drained: false,
    };
    worker.on("drained", () => {
      entry.drained = true;
      // A fan-out fills the line with queues of one job each: hand the place over now, not on
      // the next tick, or the pool turns over a few dozen queues a second.
      if (
        this.waiting.size > 0 &&
        this.open.get(item.queue) === entry &&
        canYield(entry, this.now(), this.options.idleCloseMs)
      ) {
        this.release(item.queue);
        this.pump();
      }
    });
    this.open.set(item.queue, entry);
    this.releases.reopened(item.queue);
    // Opened ahead of its first job: woken when that job comes due.
    if (item.dueAt > now) this.wakeups?.add(item.queue, item.dueAt);
    this.writeLimits(item.queue, item.limits)
      .then((generation) => {
        // Unless a later write failed meanwhile, or started since (and stamped its own).
        if (entry.limitsGeneration === LIMITS_UNWRITTEN) entry.limitsGeneration = generation;
        if (this.open.get(item.queue) === entry)
          worker.run().catch((error: Error) => this.options.onError?.(error, item.queue));
      })
      .catch((error: Error) => {
        // Could not write the limits (the queue backend is away): try again on a later demand.
        this.options.onError?.(error, item.queue);
        if (this.open.get(item.queue) === entry) this.release(item.queue);
      });
  }

  private applyLimits(name: string, open: OpenQueue, limits: QueueLimits, force = false): void {
    if (!force && sameLimits(open.limits, limits)) return;
    const now = this.now();
    const generation = this.backend.connectionGeneration();
    const keepRate = !force && rateInPlace(open, limits, generation, now);
    if (!keepRate) open.rateWrittenAt = now;
    open.limits = limits;
    open.worker.concurrency = limits.maxInFlight;
    open.limitsGeneration = generation;
    this.writeLimits(name, limits, { rateInPlace: keepRate }).catch((error: Error) => {
      open.limitsGeneration = LIMITS_FAILED;
      this.options.onError?.(error, name);
    });
  }

  /** Writes a queue's limits into the queue; resolves to the connection generation written in. */
  private async writeLimits(name: string, limits: QueueLimits, how?: LimitsWrite): Promise<number> {
    const generation = this.backend.connectionGeneration();
    await this.limits.writeQueueLimits(name, limits, how);
    return generation;
  }

  /** Closes a queue's Worker; in-flight attempts finish first (see closeWorker). */
  private release(name: string): void {
    const open = this.open.get(name);
    if (!open) return;
    this.open.delete(name);
    this.releases.release(name, this.now());
    const graceMs = this.options.closeGraceMs ?? 5000;
    const closing = closeWorker(this.backend, open.worker, open, graceMs, this.now)
      .then((outcome) => {
        if (outcome === "still-closing") throw new WorkerStillClosingError(name, graceMs);
      })
      .catch((error: Error) => this.options.onError?.(error, name))
      .finally(() => this.closing.delete(closing));
    this.closing.add(closing);
  }
}
