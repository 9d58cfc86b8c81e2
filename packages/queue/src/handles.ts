import { createPostgresBackend, type Processor, Queue, Worker, type WorkerOptions } from "bullmq";
import type { QueueBackend } from "./backend.js";

// BullMQ types a Queue or Worker by its backend; Hookline uses only the surface both backends
// share, so the PostgreSQL handles are presented under the default (Redis-typed) class here, once.

/**
 * How many of its BullMQ events (added, active, completed...) a queue keeps, about. BullMQ keeps
 * 10,000 by default, a Redis stream of some 600 KB (or as many rows of the PostgreSQL backend's
 * event table) for every endpoint that has had a few thousand deliveries, kept while it sits
 * idle. Hookline reads none of them: the attempt log is the record, and workers learn of new jobs
 * from the producers' news. A few hundred are left for an operator's look with BullMQ's tools.
 */
export const QUEUE_EVENTS_KEPT = 100;
const streams = { events: { maxLen: QUEUE_EVENTS_KEPT } };

/**
 * A producer-side handle on one queue, over the backend's shared connection. Opening one writes
 * the queue's settings into it (BullMQ's meta), among them how many events it keeps.
 */
export function openQueueHandle<T>(backend: QueueBackend, name: string): Queue<T> {
  if (backend.kind === "redis")
    return new Queue<T>(name, { connection: backend.connection, prefix: backend.prefix, streams });
  return new Queue(name, { connection: backend.pool, streams }, createPostgresBackend) as unknown as Queue<T>;
}

/** A Worker on one queue (created with autorun as given; BullMQ adds its own blocking connection). */
export function openWorker<T>(
  backend: QueueBackend,
  name: string,
  processor: Processor<T>,
  options: Omit<WorkerOptions, "connection" | "prefix" | "drainDelay">,
): Worker<T> {
  if (backend.kind === "redis") {
    // Workers share the main connection; BullMQ gives each its own blocking one.
    return new Worker<T>(name, processor, {
      ...options,
      connection: backend.connection,
      prefix: backend.prefix,
    });
  }
  return new Worker(
    name,
    processor,
    { ...options, connection: backend.workerConnection, drainDelay: backend.drainDelaySeconds },
    createPostgresBackend,
  ) as unknown as Worker<T>;
}

/**
 * Makes a Worker that waits for its next delayed job look for jobs now. On Redis it waits in a
 * blocking command whose timeout Redis ends only on its next cron tick (`hz` 10 by default), so a
 * delayed job would start up to 100 ms after it came due; the marker BullMQ itself adds when a job
 * becomes ready wakes the Worker at once. The PostgreSQL backend's Workers time that wait in Node,
 * on time already.
 */
export async function wakeWorker(backend: QueueBackend, worker: Worker): Promise<void> {
  const marker = worker.keys.marker;
  if (backend.kind !== "redis" || marker === undefined) return;
  await backend.connection.zadd(marker, 0, "0");
}
