import { Batcher } from "@hookline/batching";
import type { Queue } from "bullmq";
import type { QueueBackend } from "./backend.js";
import { openQueueHandle } from "./handles.js";
import { type LimitsWrite, readConcurrency, writeQueueLimits, writeRateLimit } from "./limits.js";
import { type MultiQueueAdder, openMultiQueueAdder } from "./multi-queue-add.js";
import { removeQueue } from "./queue-removal.js";
import {
  type DeliveryJobData,
  type EndpointRef,
  jobIdFor,
  type QueueLimits,
  type QueueRouting,
} from "./routing.js";

/** One job to add: a delivery's attempt. */
export interface EnqueueItem extends EndpointRef {
  deliveryId: string;
  attemptNumber: number;
  /**
   * When it is due (ms since the epoch; absent or past: now). A time rather than a wait, so the
   * store's next_attempt_at, BullMQ's due time and the consumers' wakeups are one instant.
   */
  dueAt?: number;
  manual?: boolean;
}

/** A queue that just received jobs, and when the earliest of them is due (ms since the epoch). */
export interface FedQueue {
  queue: string;
  dueAt: number;
}

/**
 * The queue could not take jobs now: it is unreachable, or did not answer in time. What the jobs
 * point at is in the store, so the sweeper adds them once it is back.
 */
export class QueueUnavailableError extends Error {
  override readonly name = "QueueUnavailableError";
}

export interface ProducerOptions {
  /** How often BullMQ retries a job whose processing threw (our infrastructure failed, not the endpoint). */
  infrastructureRetries?: number;
  /** Told after jobs were added, so consumers open those queues without waiting for a scan. */
  onFed?: (fed: FedQueue[]) => void;
  /** Queue handles kept open; the least recently used beyond this are closed. */
  maxOpenQueues?: number;
  /** How long enqueue waits for Redis to take the jobs before it fails (default 5 s). */
  addTimeoutMs?: number;
  /** How long Redis may be lost before calls fail at once instead of waiting (default 1 s). */
  failFastAfterMs?: number;
  now?: () => number;
}

/** Jobs per add: a fan-out's first queues open while the rest are still being added. */
const JOBS_AT_ONCE = 1000;

/**
 * BullMQ takes a job without priority (0) before any prioritized one, on Redis and on PostgreSQL
 * alike. A delivery's first attempt is prioritized, its retries and manual attempts are not, so a
 * retry that comes due goes ahead of the endpoint's backlog of new deliveries and starts on its
 * schedule: a retry belongs to an older delivery, and its wait was already chosen by the schedule.
 * In lanes (many endpoints to a queue) every job keeps plain FIFO order: there a dead endpoint's
 * retries would go ahead of other endpoints' new deliveries.
 */
export function jobPriorityOf(item: Pick<EnqueueItem, "attemptNumber" | "manual">, lanes: number): number {
  return lanes === 0 && item.attemptNumber === 1 && !item.manual ? 1 : 0;
}

/** Adds delivery jobs to the queue routing picks; job ids make adding twice harmless. */
export class DeliveryProducer {
  private readonly adder: MultiQueueAdder;
  // Handles are cheap on a shared connection, but one per endpoint ever fed would grow forever.
  private readonly queues = new Map<string, { queue: Queue<DeliveryJobData>; users: number }>();
  // Concurrent callers (many Emit calls, many workers' retries) share one multi-queue add.
  private readonly batcher = new Batcher<readonly EnqueueItem[], void>(async (calls) => {
    await this.addAll(calls.flat());
    return calls.map(() => undefined);
  }, 64);

  constructor(
    private readonly backend: QueueBackend,
    readonly routing: QueueRouting,
    private readonly options: ProducerOptions = {},
  ) {
    this.adder = openMultiQueueAdder(backend, (name, fn) => this.withHandle(name, fn));
  }

  /**
   * Adds the jobs; resolves once BullMQ holds them, and fails with QueueUnavailableError when the
   * queue is unreachable or has not taken them within addTimeoutMs. BullMQ's Redis connection
   * holds a command until Redis is back (its workers need that), and an Emit whose deliveries
   * were committed waited with it for the whole outage, answering nothing. A timed-out add may
   * still land later: job ids make that harmless.
   */
  enqueue(items: readonly EnqueueItem[]): Promise<void> {
    return items.length === 0 ? Promise.resolve() : this.bounded(() => this.batcher.add(items), true);
  }

  /**
   * The work, unless the queue is unreachable: QueueUnavailableError at once when the Redis
   * connection has been lost for over failFastAfterMs (a blip is waited out), and, when timed,
   * after addTimeoutMs without an answer; the work may still finish later, and everything done
   * through here is safe to do twice. Only Redis is timed: BullMQ's PostgreSQL backend fails a
   * query itself when it cannot connect, and on a busy embedded PGlite an add may rightly wait.
   */
  private bounded<T>(work: () => Promise<T>, timed: boolean): Promise<T> {
    const lostFor = this.backend.lostForMs();
    if (lostFor > (this.options.failFastAfterMs ?? 1000)) {
      return Promise.reject(new QueueUnavailableError(`the queue has been unreachable for ${lostFor} ms`));
    }
    if (!timed || this.backend.kind !== "redis") return work();
    const ms = this.options.addTimeoutMs ?? 5000;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new QueueUnavailableError(`the queue did not answer within ${ms} ms`)),
        ms,
      );
    });
    return Promise.race([work(), late]).finally(() => clearTimeout(timer));
  }

  private async addAll(items: readonly EnqueueItem[]): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    for (let i = 0; i < items.length; i += JOBS_AT_ONCE) {
      const chunk = items.slice(i, i + JOBS_AT_ONCE);
      const fed = new Map<string, number>();
      await this.adder.add(
        chunk.map((item) => {
          const queueName = this.routing.queueOf(item);
          const delay = Math.max(0, Math.round((item.dueAt ?? now) - now));
          // BullMQ's due time is its job's timestamp plus the delay: with the timestamp given, it
          // is exactly the dueAt consumers are told (they wake the queue's Worker then).
          const dueAt = now + delay;
          fed.set(queueName, Math.min(fed.get(queueName) ?? dueAt, dueAt));
          return {
            name: "deliver",
            queueName,
            data: {
              deliveryId: item.deliveryId,
              attemptNumber: item.attemptNumber,
              ...(item.manual && { manual: true }),
            } satisfies DeliveryJobData,
            opts: {
              jobId: jobIdFor(item.deliveryId, item.attemptNumber),
              delay,
              timestamp: now,
              priority: jobPriorityOf(item, this.routing.lanes),
              removeOnComplete: true,
              removeOnFail: { count: 1000 },
              attempts: this.options.infrastructureRetries ?? 20,
              backoff: { type: "exponential", delay: 1000 },
            },
          };
        }),
      );
      this.options.onFed?.([...fed].map(([queue, dueAt]) => ({ queue, dueAt })));
    }
  }

  /**
   * True when a job for this attempt is live: waiting, delayed or running. A job BullMQ gave up on
   * (failed: its infrastructure retries ran out, or it stalled too often) is removed and counts as
   * none: kept, its id would make adding the attempt again do nothing, and the delivery would stay
   * pending with no job to run it.
   */
  async hasLiveJob(endpoint: EndpointRef, deliveryId: string, attemptNumber: number): Promise<boolean> {
    return this.using(this.routing.queueOf(endpoint), async (queue) => {
      const job = await queue.getJob(jobIdFor(deliveryId, attemptNumber));
      if (!job) return false;
      // Only a job that has finished has finishedOn: a live one costs no second round trip.
      if (!job.finishedOn || (await job.getState()) !== "failed") return true;
      await job.remove();
      return false;
    });
  }

  /**
   * Writes an endpoint's new limits into its queue now, so an update holds from the moment it is
   * answered (workers serving the queue also pick them up on their next look at the store).
   */
  async writeLimits(
    endpoint: EndpointRef,
    own: { maxInFlight: number | null; ratePerSecond: number | null },
    /**
     * What the queue holds was not learned of this server: the endpoint's own max_in_flight was
     * just cleared, or its URL now names another server.
     */
    { backToDefault = false }: { backToDefault?: boolean } = {},
  ): Promise<void> {
    if (this.routing.lanes > 0) return;
    const queue = this.routing.queueOf(endpoint);
    const limits = this.routing.limitsOf(own);
    // An adaptive limit belongs to the workers that learned it: only the rate is the endpoint's.
    // Back from a fixed limit it starts over from the default's start; kept, the old fixed value
    // (up to 1,000, above the adaptive ceiling) was shown as the limit, then taken as learned.
    if (limits.adaptive && !backToDefault)
      await this.using(queue, (handle) => writeRateLimit(handle, limits.ratePerSecond));
    else await this.writeQueueLimits(queue, limits);
  }

  /** The in-flight limit an endpoint's queue (or lane) enforces now; undefined when none was written yet. */
  currentLimit(endpoint: EndpointRef): Promise<number | undefined> {
    return this.readConcurrency(this.routing.queueOf(endpoint));
  }

  /** The concurrency a queue enforces now (fixed or learned); undefined when none was written yet. */
  readConcurrency(queue: string): Promise<number | undefined> {
    return this.using(queue, readConcurrency);
  }

  /** A queue's jobs in flight now, across every worker process. */
  readInFlight(queue: string): Promise<number> {
    return this.using(queue, (handle) => handle.getActiveCount());
  }

  /** Writes limits into one queue, through the same handles the producer adds jobs with. */
  writeQueueLimits(queue: string, limits: QueueLimits, how?: LimitsWrite): Promise<void> {
    return this.using(queue, (handle) => writeQueueLimits(handle, limits, how));
  }

  /**
   * Removes an endpoint's queue and its jobs (its endpoint was deleted, its pending deliveries
   * cancelled in the store), but for any under way (see removeQueue). A lane is shared, so it is
   * left alone.
   */
  async discard(endpoint: EndpointRef): Promise<void> {
    if (this.routing.lanes > 0) return;
    await this.using(this.routing.queueOf(endpoint), removeQueue, false);
  }

  /**
   * Lets a new endpoint's queue run: a removal that failed halfway (obliterate pauses the queue
   * first, and Redis went away before the resume) leaves its queue paused, and an endpoint that
   * later takes the deleted one's id would never be served. A lane is never removed, so never paused.
   */
  async unpause(endpoint: EndpointRef): Promise<void> {
    if (this.routing.lanes > 0) return;
    await this.using(this.routing.queueOf(endpoint), async (queue) => {
      if (await queue.isPaused()) await queue.resume();
    });
  }

  async close(): Promise<void> {
    const handles = [...this.queues.values()];
    this.queues.clear();
    await Promise.allSettled([this.adder.close(), ...handles.map((h) => h.queue.close())]);
  }

  /**
   * Runs fn with the queue's handle, bounded as adds are (a GetEndpoint or an UpdateEndpoint does
   * not wait for Redis to come back), except a queue's removal, which may rightly take long.
   */
  private using<T>(
    name: string,
    fn: (queue: Queue<DeliveryJobData>) => Promise<T>,
    timed = true,
  ): Promise<T> {
    return this.bounded(() => this.withHandle(name, fn), timed);
  }

  /** Runs fn with the queue's handle, which is not closed while in use. */
  private async withHandle<T>(name: string, fn: (queue: Queue<DeliveryJobData>) => Promise<T>): Promise<T> {
    let handle = this.queues.get(name);
    if (handle) {
      this.queues.delete(name); // most recently used last: the oldest is closed first
    } else {
      const queue = openQueueHandle<DeliveryJobData>(this.backend, name);
      queue.on("error", () => {});
      handle = { queue, users: 0 };
    }
    this.queues.set(name, handle);
    handle.users += 1;
    try {
      return await fn(handle.queue);
    } finally {
      handle.users -= 1;
      this.closeLeastRecentlyUsed();
    }
  }

  private closeLeastRecentlyUsed(): void {
    const max = this.options.maxOpenQueues ?? 1000;
    for (const [name, handle] of this.queues) {
      if (this.queues.size <= max) break;
      if (handle.users > 0) continue;
      this.queues.delete(name);
      handle.queue.close().catch(() => {});
    }
  }
}
