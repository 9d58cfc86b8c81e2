import type { Worker } from "bullmq";
import type { QueueBackend } from "./backend.js";

/** What the consumer knows of a Worker's jobs: how many run now, and when the last one ended. */
export interface WorkerActivity {
  inFlight: number;
  lastBusyAt: number;
}

/** How a Worker's close ended. */
export type WorkerCloseOutcome = "closed" | "still-closing";

/**
 * Closes a queue's Worker; its in-flight jobs finish first.
 *
 * BullMQ 6.7's `Worker.close()` never resolves when it is called while the Worker's blocking
 * Redis connection is between retries after a connection loss (bullmq issues 4656 and 4585): it
 * disconnects that client, which cancels ioredis's retry timer and leaves it "reconnecting" with
 * no socket, so the "end" the close awaits never comes. So the close waits for that client to be
 * back first. While Redis stays away that is for good: the close is then given up once the Worker
 * has had no job in flight for `graceMs` (its jobs are done; only its connections are left), and
 * goes on in the background, ending when Redis is back. A process exiting then loses nothing. The
 * same bound holds on the PostgreSQL backend, whose close has no such known trap.
 */
export async function closeWorker(
  backend: QueueBackend,
  worker: Worker,
  activity: WorkerActivity,
  graceMs: number,
  now: () => number = Date.now,
): Promise<WorkerCloseOutcome> {
  // Takes no more jobs from now on, though close() may wait (pause(true) leaves the connections be).
  void worker.pause(true).catch(() => {});
  const closed = (backend.kind === "redis" ? blockingClientBack(worker) : Promise.resolve())
    .catch(() => {})
    .then(() => worker.close());
  let timer: NodeJS.Timeout | undefined;
  const startedAt = now();
  const idle = new Promise<"still-closing">((resolve) => {
    const check = () => {
      const quietFor = activity.inFlight > 0 ? 0 : now() - Math.max(startedAt, activity.lastBusyAt);
      if (quietFor >= graceMs) resolve("still-closing");
      else timer = setTimeout(check, graceMs - quietFor);
    };
    check();
  });
  try {
    return await Promise.race([closed.then(() => "closed" as const), idle]);
  } finally {
    clearTimeout(timer);
    // A close that ends after it was given up has no one left to tell.
    closed.catch(() => {});
  }
}

/** Resolves when the Worker's blocking client is not between retries (at once, mostly). */
async function blockingClientBack(worker: Worker): Promise<"back"> {
  const connection = worker.backend.blockingConnection;
  // Never set up (Redis away since the Worker opened): BullMQ's close ends the set-up at once.
  if (!worker.isRunning() || connection?.status !== "ready") return "back";
  const client = await connection.client;
  if (client.status !== "reconnecting") return "back";
  return new Promise((resolve) => {
    const back = () => {
      client.removeListener("ready", back);
      client.removeListener("end", back);
      resolve("back");
    };
    client.once("ready", back);
    client.once("end", back);
  });
}

/** closeWorker gave up waiting for a queue's Worker: its jobs are done, its close goes on. */
export class WorkerStillClosingError extends Error {
  constructor(
    readonly queueName: string,
    graceMs: number,
  ) {
    super(
      `its BullMQ Worker has not closed ${graceMs} ms after its last job; it goes on closing in the background`,
    );
    this.name = "WorkerStillClosingError";
  }
}
