import type { DeliveryJobData, EndpointRef, QueueLimits } from "./routing.js";

/**
 * Runs one job. `held` resolves true while this process still holds the job (see stillHeld): the
 * processor asks just before the attempt's request, which must go out only as a job counted.
 */
export type DeliveryProcessor = (
  job: DeliveryJobData,
  queueName: string,
  held: () => Promise<boolean>,
) => Promise<void>;

/** A queue with work due at dueAt (ms since the epoch), and the limits it enforces. */
export interface QueueDemand {
  queue: string;
  dueAt: number;
  limits: QueueLimits;
  /** The endpoint it serves (none for a lane). */
  endpoint?: EndpointRef | undefined;
}

export interface ConsumerOptions {
  /** Queues this process serves at once; each holds a connection while open. */
  maxOpenQueues: number;
  /** An open queue with nothing in flight for this long is closed. */
  idleCloseMs: number;
  /** A busy queue yields its place to a waiting one after this long, when all places are taken. */
  turnMs: number;
  /**
   * Lock lifetime of an in-flight job. A live worker renews it at half this (an attempt may run
   * longer); a dead one's jobs are found by the others' stalled checks, run at half this too.
   */
  stalledAfterMs: number;
  /**
   * A Worker's close not ended this long after its last job is no longer waited for (it goes on,
   * ending when the queue backend is back; see closeWorker). 5 s by default.
   */
  closeGraceMs?: number;
  onError?: (error: Error, queueName: string) => void;
  /** A job whose lock lapsed (its worker died or was starved of CPU) was put back to run again. */
  onStalled?: (jobId: string, queueName: string) => void;
  /**
   * Processing a job threw: our own infrastructure failed (the store or the queue), not the
   * endpoint. BullMQ runs it again after a backoff, so an attempt it had sent may be sent twice.
   */
  onJobFailed?: (jobId: string, error: Error, queueName: string) => void;
  /**
   * True for an error that says our store is away, not that this job went wrong; the caller
   * answers true only for what happened before the job sent anything, since the job runs again
   * with no retry counted. It goes back to wait (on Redis at the head of its queue; on the
   * PostgreSQL backend at the tail, as BullMQ's move gives it a new place), and this process's
   * Worker for its queue takes no job for outageWaitMs (BullMQ's manual rate limit: a queue with a
   * rate limit pauses in every process, and for at least one of its windows). Failed instead, jobs
   * kept doubling their backoff through the outage and waited about as long again after it ended.
   */
  isOutage?: (error: unknown) => boolean;
  /** How long a queue waits after a job found the store away: 5 s by default. */
  outageWaitMs?: number;
  /** A job found the store away (isOutage): it runs again once its queue has waited. */
  onOutage?: (error: unknown, queueName: string) => void;
  /**
   * True while writes that follow this queue's finished jobs are pending (the worker records an
   * attempt after its job ends): its overdue deliveries are those, not a stalled job's.
   */
  writesPending?: (queueName: string) => boolean;
  now?: () => number;
}
