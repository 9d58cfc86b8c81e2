import { createPostgresBackend, type Processor, Queue, Worker, type WorkerOptions } from "bullmq";
import type { QueueBackend } from "./backend.js";

// BullMQ types a Queue or Worker by its backend; Hookline uses only the surface both backends
// share, so the PostgreSQL handles are presented under the default (Redis-typed) class here, once.

/** A producer-side handle on one queue, over the backend's shared connection. */
export function openQueueHandle<T>(backend: QueueBackend, name: string): Queue<T> {
  if (backend.kind === "redis")
    return new Queue<T>(name, { connection: backend.connection, prefix: backend.prefix });
  return new Queue(name, { connection: backend.pool }, createPostgresBackend) as unknown as Queue<T>;
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
