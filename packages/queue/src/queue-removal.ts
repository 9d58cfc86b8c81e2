import type { Queue } from "bullmq";

/**
 * Removes a queue and everything in it (its endpoint was deleted), unless one of its jobs is
 * under way. Removing the lock of a job a worker holds makes that worker fail to renew it, an
 * error in its log for a plain delete; so then only the waiting and delayed jobs go, and the job
 * under way ends as usual, leaving the queue's few keys behind.
 */
export async function removeQueue(queue: Queue): Promise<void> {
  if ((await queue.getActiveCount()) > 0) {
    await queue.drain(true);
    return;
  }
  try {
    await queue.obliterate();
  } catch (error) {
    // A job started between the count and the removal: obliterate paused the queue, then refused.
    // Should Redis be the cause, resume fails too and that error is the caller's to log.
    await queue.resume();
    await queue.drain(true);
    if (!(error instanceof Error && /active jobs/i.test(error.message))) throw error;
  }
}
