import { type Job, Worker } from "bullmq";
import type { QueueBackend } from "./backend.js";
import type { DeliveryJobData } from "./names.js";

export type DeliveryProcessor = (job: DeliveryJobData, queueName: string) => Promise<void>;

export interface ConsumerOptions {
  /** In-flight jobs per queue in this process; the queue's global concurrency caps all processes. */
  concurrency: number;
  /**
   * Lock lifetime of an in-flight job. A live worker renews it at half this (an attempt may run
   * longer); a dead one's jobs are found by the others' stalled checks, run at half this too.
   */
  stalledAfterMs: number;
  onError?: (error: Error, queueName: string) => void;
}

/** Runs one BullMQ Worker per queue name it is given, all calling the same processor. */
export class DeliveryConsumer {
  private readonly workers = new Map<string, Worker<DeliveryJobData>>();
  private closing = false;

  constructor(
    private readonly backend: QueueBackend,
    private readonly processor: DeliveryProcessor,
    private readonly options: ConsumerOptions,
  ) {}

  /** Starts workers for queues not yet served. */
  ensure(queueNames: Iterable<string>): void {
    if (this.closing) return;
    for (const name of queueNames) {
      if (this.workers.has(name)) continue;
      const worker = new Worker<DeliveryJobData>(
        name,
        (job: Job<DeliveryJobData>) => this.processor(job.data, name),
        {
          ...(this.backend.workerConnection() as object),
          concurrency: this.options.concurrency,
          lockDuration: this.options.stalledAfterMs,
          stalledInterval: Math.round(this.options.stalledAfterMs / 2),
          maxStalledCount: 5,
        } as never,
        this.backend.factory as never,
      );
      worker.on("error", (error) => this.options.onError?.(error, name));
      this.workers.set(name, worker);
    }
  }

  get queueNames(): string[] {
    return [...this.workers.keys()];
  }

  /** Waits until every worker is connected and polling. */
  async ready(): Promise<void> {
    await Promise.all([...this.workers.values()].map((w) => w.waitUntilReady()));
  }

  /** Stops taking jobs and waits for in-flight ones to finish. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.workers.values()].map((w) => w.close()));
    this.workers.clear();
  }
}
