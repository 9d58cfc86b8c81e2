import type { Queue } from "bullmq";
import type { QueueLimits } from "./routing.js";

/**
 * Writes a queue's limits into the queue itself (BullMQ's global concurrency and rate limit), so
 * they hold across every worker process.
 */
export async function writeQueueLimits(queue: Queue, limits: QueueLimits): Promise<void> {
  await queue.setGlobalConcurrency(limits.maxInFlight);
  await writeRateLimit(queue, limits.ratePerSecond);
}

/** Writes only the rate limit (undefined: none), leaving the concurrency as it is. */
export async function writeRateLimit(queue: Queue, ratePerSecond: number | undefined): Promise<void> {
  if (ratePerSecond === undefined) await queue.removeGlobalRateLimit();
  else await queue.setGlobalRateLimit(...rateWindow(ratePerSecond));
}

/** The concurrency a queue enforces now, as the last writer left it; undefined: none written yet. */
export async function readConcurrency(queue: Queue): Promise<number | undefined> {
  return (await queue.getGlobalConcurrency()) ?? undefined;
}

/**
 * A rate as BullMQ's (max jobs, window ms): a whole rate is that many starts in each second (a
 * backlog starts them at the top of each window); a fractional one is one start per 1/rate
 * seconds (2.5/s: one per 400 ms), so no rounding changes the rate.
 */
export function rateWindow(perSecond: number): [number, number] {
  if (Number.isInteger(perSecond)) return [perSecond, 1000];
  return [1, Math.max(1, Math.round(1000 / perSecond))];
}
