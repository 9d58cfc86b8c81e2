import type { Queue } from "bullmq";
import type { QueueLimits } from "./routing.js";

/** How a write of a queue's limits goes. */
export interface LimitsWrite {
  /** The queue holds this rate already (see DeliveryConsumer.applyLimits): only the concurrency is written. */
  rateInPlace?: boolean;
}

/**
 * Writes a queue's limits into the queue itself (BullMQ's global concurrency and rate limit), so
 * they hold across every worker process.
 */
export async function writeQueueLimits(
  queue: Queue,
  limits: QueueLimits,
  { rateInPlace = false }: LimitsWrite = {},
): Promise<void> {
  await queue.setGlobalConcurrency(limits.maxInFlight);
  if (!rateInPlace) await writeRateLimit(queue, limits.ratePerSecond);
}

/**
 * How long a queue pauses after one of its jobs found the store away. The pause sets the queue's
 * limiter key, which a rate-limited queue's current window also holds: never shorter than one of
 * its windows, so the pause cannot end that window early.
 */
export function outageWait(waitMs: number, limits: QueueLimits): number {
  if (limits.ratePerSecond === undefined) return waitMs;
  return Math.max(waitMs, rateWindow(limits.ratePerSecond)[1]);
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
 * A rate as BullMQ's (max jobs, window ms). A backlog starts its window's quota at the top of
 * each window, so windows are kept short for smooth traffic, yet exact: a whole rate gets the
 * shortest window of at least 50 ms that holds a whole number of starts (20/s: one per 50 ms;
 * 30/s: 3 per 100 ms; 97/s: 97 per second). A fractional rate is one start per 1/rate seconds
 * (2.5/s: one per 400 ms). One start per second-long window let the embedded backend pass two
 * windows' worth in a burst's first second (22.5/s read over a burst at 20/s).
 */
export function rateWindow(perSecond: number): [number, number] {
  if (!Number.isInteger(perSecond))
    return [1, Math.min(MAX_WINDOW_MS, Math.max(1, Math.round(1000 / perSecond)))];
  // Windows per second: the largest divisor of gcd(rate, 1000) that keeps a window >= 50 ms.
  const common = gcd(perSecond, 1000);
  let perSecondWindows = 1;
  for (let d = 1; d <= MAX_WINDOWS_PER_SECOND; d++) if (common % d === 0) perSecondWindows = d;
  return [perSecond / perSecondWindows, 1000 / perSecondWindows];
}

/**
 * The longest window: the api takes no rate below one a day. A far longer one (1e-300/s is 1e303
 * ms) does not fit the bigint of BullMQ's PostgreSQL backend, and every fetch from it failed.
 */
const MAX_WINDOW_MS = 86_400_000;

/** Shorter windows than 50 ms would cost the worker a wait per few jobs at high rates. */
const MAX_WINDOWS_PER_SECOND = 20;

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
