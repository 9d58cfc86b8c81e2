import { Batcher } from "@hookline/batching";
import { Queue } from "bullmq";
import type { QueueBackend } from "./backend.js";
import { type DeliveryJobData, jobIdFor, queueNameFor } from "./names.js";

/** One job to add: a delivery's attempt, due after delayMs. */
export interface EnqueueItem {
  deliveryId: string;
  tenantId: string;
  endpointId: string;
  attemptNumber: number;
  delayMs: number;
  manual?: boolean;
}

export interface ProducerOptions {
  lanes: number;
  endpointConcurrency: number;
  /** How often BullMQ retries a job whose processing threw (our infrastructure failed, not the endpoint). */
  infrastructureRetries?: number;
}

/** Adds delivery jobs to their endpoint's (or lane's) queue; job ids make adding twice harmless. */
export class DeliveryProducer {
  private readonly queues = new Map<string, Promise<Queue<DeliveryJobData>>>();
  /** Per queue: the backend connection generation its concurrency cap was last written in. */
  private readonly capWritten = new Map<string, number>();
  // Concurrent callers (many Emit calls, many workers' retries) share one addBulk per queue.
  private readonly batcher = new Batcher<readonly EnqueueItem[], void>(async (calls) => {
    await this.addAll(calls.flat());
    return calls.map(() => undefined);
  }, 64);

  constructor(
    private readonly backend: QueueBackend,
    private readonly options: ProducerOptions,
  ) {}

  queueNameFor(tenantId: string, endpointId: string): string {
    return queueNameFor(tenantId, endpointId, this.options.lanes);
  }

  /** Adds the jobs; resolves once BullMQ holds them. */
  enqueue(items: readonly EnqueueItem[]): Promise<void> {
    return items.length === 0 ? Promise.resolve() : this.batcher.add(items);
  }

  private async addAll(items: readonly EnqueueItem[]): Promise<void> {
    const byQueue = new Map<string, EnqueueItem[]>();
    for (const item of items) {
      const name = this.queueNameFor(item.tenantId, item.endpointId);
      const list = byQueue.get(name);
      if (list) list.push(item);
      else byQueue.set(name, [item]);
    }
    await Promise.all(
      [...byQueue].map(async ([name, list]) => {
        const queue = await this.queue(name);
        await this.writeCap(name, queue);
        await queue.addBulk(
          list.map((item) => ({
            name: "deliver",
            data: {
              deliveryId: item.deliveryId,
              attemptNumber: item.attemptNumber,
              ...(item.manual && { manual: true }),
            },
            opts: {
              jobId: jobIdFor(item.deliveryId, item.attemptNumber),
              delay: Math.max(0, Math.round(item.delayMs)),
              removeOnComplete: true,
              removeOnFail: { count: 1000 },
              attempts: this.options.infrastructureRetries ?? 20,
              backoff: { type: "exponential", delay: 1000 },
            },
          })),
        );
      }),
    );
  }

  /** True when a job for this attempt exists in any state (waiting, delayed, active...). */
  async hasJob(
    tenantId: string,
    endpointId: string,
    deliveryId: string,
    attemptNumber: number,
  ): Promise<boolean> {
    const queue = await this.queue(this.queueNameFor(tenantId, endpointId));
    const job = await queue.getJob(jobIdFor(deliveryId, attemptNumber));
    return job !== undefined && job !== null;
  }

  async close(): Promise<void> {
    const queues = await Promise.allSettled(this.queues.values());
    this.queues.clear();
    await Promise.allSettled(queues.map((q) => (q.status === "fulfilled" ? q.value.close() : undefined)));
  }

  private queue(name: string): Promise<Queue<DeliveryJobData>> {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = this.open(name);
      this.queues.set(name, queue);
      queue.catch(() => this.queues.delete(name));
    }
    return queue;
  }

  private async open(name: string): Promise<Queue<DeliveryJobData>> {
    const queue = new Queue<DeliveryJobData>(
      name,
      this.backend.queueConnection() as never,
      this.backend.factory as never,
    );
    queue.on("error", () => {});
    await this.writeCap(name, queue);
    return queue;
  }

  /**
   * The cap lives in the queue itself, so it holds across every worker process. It is written
   * again before the first add after a reconnect: a Redis that restarted empty has lost it, and
   * every job reaches the queue through a producer, so the cap is back before its jobs are.
   */
  private async writeCap(name: string, queue: Queue<DeliveryJobData>): Promise<void> {
    const generation = this.backend.connectionGeneration();
    if (this.capWritten.get(name) === generation) return;
    await queue.setGlobalConcurrency(this.options.endpointConcurrency);
    this.capWritten.set(name, generation);
  }
}
