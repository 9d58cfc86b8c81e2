import type { Job } from "bullmq";
import type { QueueBackend } from "./backend.js";
import type { DeliveryJobData } from "./routing.js";

/**
 * True while this process still holds the job, so its request counts against the queue's limit.
 * It costs nothing unless the job may have been taken away since BullMQ took its lock for us (its
 * processedOn, our clock; a fetched job may wait in the Worker before its processor starts):
 * - the connection dropped since: a Redis that restarted empty lost the job, and with it its
 *   place among the jobs in flight, while the sweeper adds it again for another worker;
 * - half its lock's lifetime passed: a starved process's lock lapses, and BullMQ's stalled check
 *   hands the job to another worker.
 * Either way its request would go out beside those the queue counts, over the endpoint's limit,
 * and twice to the receiver. Asking BullMQ to extend the lock answers it: the lock is still ours.
 */
export async function stillHeld(
  backend: QueueBackend,
  job: Job<DeliveryJobData>,
  token: string | undefined,
  lockMs: number,
): Promise<boolean> {
  if (token === undefined) return true;
  const lockedAt = job.processedOn ?? 0;
  const lostAt = backend.lastLostAt();
  if (
    backend.lostForMs() === 0 &&
    (lostAt === undefined || lostAt < lockedAt) &&
    Date.now() - lockedAt < lockMs / 2
  )
    return true;
  return Number(await job.extendLock(token, lockMs)) === 1;
}
