import type { Worker } from "bullmq";
import type { DeliveryJobData, EndpointRef, QueueLimits } from "./routing.js";

/** How early a queue opens before its first job is due, so the job starts on time. */
export const OPEN_AHEAD_MS = 250;

/** A queue whose BullMQ Worker is open in this process, and what the consumer tracks of it. */
export interface OpenQueue {
  worker: Worker<DeliveryJobData>;
  endpoint: EndpointRef | undefined;
  limits: QueueLimits;
  /**
   * The backend connection generation the limits were last written in; LIMITS_UNWRITTEN until the
   * open's first write lands, LIMITS_FAILED after a write failed (tick writes them all again).
   */
  limitsGeneration: number;
  /** When the rate limit was last written into the queue (see DeliveryConsumer.applyLimits). */
  rateWrittenAt: number;
  inFlight: number;
  openedAt: number;
  lastBusyAt: number;
  /** Kept open until then, unless others wait and it has served its jobs: a job is due shortly. */
  keepUntil: number;
  /**
   * Kept open until then whatever else waits: its overdue jobs are active in another (maybe dead)
   * worker, and only an open Worker's stalled check, two passes apart, moves them back.
   */
  stalledWatchUntil: number;
  /** Jobs it has taken since it opened. */
  served: number;
  drained: boolean;
}

/**
 * Whether an open queue may give its place to a waiting one: nothing in flight, nothing left to
 * take, and no reason to stay (a job due shortly that it has not served yet, or stalled jobs).
 */
export function canYield(open: OpenQueue, now: number, idleCloseMs: number): boolean {
  if (open.inFlight > 0 || now < open.stalledWatchUntil) return false;
  const idle = now - open.lastBusyAt >= idleCloseMs;
  return (open.drained && (open.served > 0 || now >= open.keepUntil)) || (idle && now >= open.keepUntil);
}

export function sameLimits(a: QueueLimits, b: QueueLimits): boolean {
  // A fixed limit equal to the learned one is still news: the workers must stop learning.
  return (
    a.maxInFlight === b.maxInFlight &&
    a.ratePerSecond === b.ratePerSecond &&
    Boolean(a.adaptive) === Boolean(b.adaptive)
  );
}
