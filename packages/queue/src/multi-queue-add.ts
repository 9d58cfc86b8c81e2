import { createPostgresBackend, type FlowJob, FlowProducer } from "bullmq";
import type { QueueBackend } from "./backend.js";

/**
 * Adds jobs to many queues in one round trip (BullMQ's FlowProducer.addBulk: one MULTI on Redis,
 * one statement on PostgreSQL), where a Queue handle per queue would cost a round trip each: a
 * fan-out to 1,000 endpoints took 15 s to enqueue on embedded PGlite that way.
 */
export interface MultiQueueAdder {
  /** Resolves once every job is held (a job whose id exists already is left as it is). */
  add(jobs: FlowJob[]): Promise<void>;
  close(): Promise<void>;
}

export function openMultiQueueAdder(backend: QueueBackend): MultiQueueAdder {
  if (backend.kind === "redis") {
    // A failed MULTI rejects addBulk on Redis (EXECABORT), so its errors reach the caller.
    const flows = new FlowProducer({ connection: backend.connection, prefix: backend.prefix });
    flows.on("error", () => {});
    return {
      add: async (jobs) => {
        await flows.addBulk(jobs);
      },
      close: () => flows.close(),
    };
  }
  const flows = new FlowProducer({ connection: backend.flowPool }, createPostgresBackend);
  flows.on("error", () => {});
  // One add at a time, so the errors read from the pool after an add are that add's.
  let previous: Promise<unknown> = Promise.resolve();
  return {
    add(jobs) {
      const run = previous.then(async () => {
        backend.takeFlowErrors();
        await flows.addBulk(jobs);
        const [error] = backend.takeFlowErrors();
        if (error) throw error;
      });
      previous = run.catch(() => {});
      return run;
    },
    close: () => flows.close(),
  };
}
