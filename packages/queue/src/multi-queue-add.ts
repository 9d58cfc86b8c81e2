import { createPostgresBackend, type FlowJob, FlowProducer, type Queue } from "bullmq";
import type { QueueBackend } from "./backend.js";
import { writeTogether } from "./write-together.js";

/** Runs fn with the open handle of a queue (the producer's, kept across calls). */
export type WithQueue = <T>(name: string, fn: (queue: Queue) => Promise<T>) => Promise<T>;

/**
 * On Redis, an add that feeds at most this many queues goes through each queue's own handle.
 * Queue.addBulk costs BullMQ about half the Node CPU per job of FlowProducer.addBulk (44–54
 * against 73–93 µs, the same 11 Redis commands), and the adds share one connection, whose writes
 * are held until all are made (writeTogether). Past this (a fan-out), one FlowProducer MULTI: the
 * handles would be opened and closed by the thousand.
 */
const PER_QUEUE_UP_TO = 64;

/**
 * On Redis, a queue fed fewer jobs than this gets them with Queue.add, one script call each, not
 * with Queue.addBulk: a bulk add builds an ioredis pipeline (not a MULTI: the jobs of one add are
 * not added atomically either way), which copies every BullMQ script onto itself. From a script,
 * 16 callers adding at once, Node and Redis CPU per job: one job 84-127 and 44-56 us by addBulk,
 * 37-41 and 35-38 by add; two jobs 70 and 39 against 25 and 32; five jobs the same either way
 * (32 and 32). An Emit at low load feeds each of its endpoints' queues one job, and so does a
 * retry.
 */
const BULK_FROM = 4;

/**
 * Adds jobs to many queues in one round trip: on PostgreSQL one statement (BullMQ's
 * FlowProducer.addBulk), where a Queue handle per queue would cost a round trip each (a fan-out
 * to 1,000 endpoints took 15 s to enqueue on embedded PGlite that way); on Redis one pipeline per
 * queue fed (or a script call per job, for a queue fed a few), all in one socket write, or one
 * FlowProducer MULTI for a fan-out.
 */
export interface MultiQueueAdder {
  /** Resolves once every job is held (a job whose id exists already is left as it is). */
  add(jobs: FlowJob[]): Promise<void>;
  close(): Promise<void>;
}

export function openMultiQueueAdder(backend: QueueBackend, withQueue: WithQueue): MultiQueueAdder {
  if (backend.kind === "redis") {
    // A failed MULTI rejects addBulk on Redis (EXECABORT), so its errors reach the caller.
    const flows = new FlowProducer({ connection: backend.connection, prefix: backend.prefix });
    flows.on("error", () => {});
    return {
      add: async (jobs) => {
        const byQueue = new Map<string, FlowJob[]>();
        for (const job of jobs) {
          const list = byQueue.get(job.queueName);
          if (list) list.push(job);
          else byQueue.set(job.queueName, [job]);
        }
        if (byQueue.size > PER_QUEUE_UP_TO) {
          await flows.addBulk(jobs);
          return;
        }
        // One write to Redis for every queue's add: at 200 Emits a second (each alone, to 4
        // endpoints) the api made 7.9 socket writes per Emit, then 5.0, and used 9% less CPU.
        writeTogether(backend.connection);
        await Promise.all(
          [...byQueue].map(([name, list]) =>
            withQueue(name, async (queue) => {
              if (list.length >= BULK_FROM)
                await queue.addBulk(list.map(({ name, data, opts }) => ({ name, data, opts })));
              // Called in order on the one connection, so Redis takes them in order.
              else await Promise.all(list.map(({ name, data, opts }) => queue.add(name, data, opts)));
            }),
          ),
        );
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
