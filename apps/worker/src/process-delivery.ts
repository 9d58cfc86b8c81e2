import {
  type AttemptOutcome,
  type HttpClient,
  type RetryPolicy,
  retryDelayMs,
  verdictOf,
} from "@hookline/delivery";
import type { DeliveryJobData, DeliveryProducer } from "@hookline/queue";
import { parseSecret, webhookHeaders } from "@hookline/signing";
import {
  type AttemptResult,
  type DeliveryStatusValue,
  type DeliveryWork,
  MAX_PREVIOUS_SECRETS,
  type RecordedAttempt,
} from "@hookline/store";
import { envelopeOf } from "./envelope.js";

/** What processing one delivery job needs; every piece is passed in so tests can swap clocks and randomness. */
export interface DeliveryDeps {
  loadWork(deliveryId: string): Promise<DeliveryWork | undefined>;
  /** Resolves to the attempt as recorded, or undefined when it was already recorded elsewhere. */
  recordAttempt(result: AttemptResult): Promise<RecordedAttempt | undefined>;
  cancel(deliveryId: string): Promise<void>;
  /**
   * Runs the writes that follow an answer (recording the attempt, queuing the next): the worker
   * defers them, so the job ends when the endpoint has answered (see DeferredWrites).
   */
  afterAnswer(writes: () => Promise<void>): Promise<void>;
  /**
   * True while this worker still holds the job (stillHeld in @hookline/queue): a job the queue
   * lost or handed to another worker sends nothing; its delivery waits for the job that replaced it.
   */
  stillHeld(): Promise<boolean>;
  producer: Pick<DeliveryProducer, "enqueue">;
  http: HttpClient;
  retry: RetryPolicy;
  now(): number;
  random(): number;
  /**
   * Told as an attempt's request starts: which attempt, and how long after it was due (ms, never
   * negative). A job that runs again (a worker stalled) starts its request again, and is told again.
   */
  attemptStarted?(kind: AttemptKind, lateMs: number): void;
}

export type AttemptKind = "first" | "retry" | "manual";

/**
 * Runs one attempt of a delivery. The store decides which attempt is due, so a job that stalled
 * and ran again, or a stale retry job, changes nothing. Throws only when our own infrastructure
 * fails (the store or the queue); BullMQ then retries the job. Resolves to what the receiver
 * answered, or undefined when no attempt was made.
 */
export async function processDelivery(
  deps: DeliveryDeps,
  job: DeliveryJobData,
): Promise<AttemptOutcome | undefined> {
  const work = await deps.loadWork(job.deliveryId);
  if (work?.status !== "pending") return undefined;
  const due = work.attemptCount + 1;
  if (job.attemptNumber !== due) {
    // An older job ran late (or again): make sure the due attempt has its job, then stop.
    if (job.attemptNumber < due)
      await scheduleAttempt(deps, work, due, work.nextAttemptAt?.getTime(), work.nextAttemptManual);
    return undefined;
  }
  if (work.endpoint?.status !== "enabled") {
    await deps.cancel(work.id);
    return undefined;
  }

  // Asked last before the request (all that follows is synchronous): the work above may have
  // waited out an outage of the queue, or been starved of CPU.
  if (!(await deps.stillHeld())) return undefined;

  // The store says whether this attempt was asked for by hand: a job the sweeper put back carries
  // no mark of its own.
  const manual = job.manual === true || work.nextAttemptManual;
  const body = envelopeOf(work);
  const startedAt = deps.now();
  // During a rotation's grace period every live secret signs, so receivers holding either verify;
  // at most the latest MAX_PREVIOUS_SECRETS, also for an endpoint rotated before that bound.
  const secrets = [
    work.endpoint.secret,
    ...work.endpoint.previousSecrets
      .filter((p) => p.expiresAt.getTime() > startedAt)
      .slice(-MAX_PREVIOUS_SECRETS)
      .map((p) => p.secret),
  ];
  const headers = webhookHeaders(secrets.map(parseSecret), work.eventId, Math.floor(startedAt / 1000), body);
  headers["user-agent"] = "Hookline/0.1";
  // The api's clock set a first or manual attempt's due time: one ahead of ours must not read as
  // early (one behind adds its skew).
  const dueAt = work.nextAttemptAt?.getTime() ?? startedAt;
  deps.attemptStarted?.(manual ? "manual" : due === 1 ? "first" : "retry", Math.max(0, startedAt - dueAt));
  const outcome = await deps.http.post({ url: work.endpoint.url, headers, body });

  const verdict = verdictOf(outcome);
  // A manual attempt is one attempt: it never starts a new retry schedule.
  const waitMs =
    verdict === "retry" && !manual ? retryDelayMs(deps.retry, due, outcome, deps.random) : undefined;
  // The wait runs from the answer: recording the attempt and adding the job come out of it.
  const nextAttemptAt = waitMs === undefined ? undefined : deps.now() + waitMs;
  const status: DeliveryStatusValue =
    verdict === "delivered"
      ? "delivered"
      : verdict === "gone"
        ? "cancelled"
        : waitMs === undefined
          ? "failed"
          : "pending";
  const result: AttemptResult = {
    deliveryId: work.id,
    attemptNumber: due,
    url: work.endpoint.url,
    startedAt: new Date(startedAt),
    durationMs: Math.round(outcome.durationMs),
    responseStatus: outcome.kind === "response" ? outcome.status : 0,
    responseBody: outcome.kind === "response" ? outcome.body : "",
    error: outcome.kind === "error" ? outcome.error : "",
    deliveryStatus: status,
    nextAttemptAt: nextAttemptAt === undefined ? null : new Date(nextAttemptAt),
    trigger: manual ? "manual" : "scheduled",
    ...(verdict === "gone" && { disableEndpointReason: "the endpoint answered 410 Gone" }),
  };
  // The writes may run after the job: they keep the delivery's ids, not its payload.
  const delivery = { id: work.id, tenantId: work.tenantId, endpointId: work.endpointId };
  const writes = async () => {
    const recorded = await deps.recordAttempt(result);
    // Not when the delivery was cancelled during the attempt (its endpoint deleted).
    if (recorded?.deliveryStatus === "pending" && nextAttemptAt !== undefined)
      await scheduleAttempt(deps, delivery, due + 1, nextAttemptAt);
  };
  // A 410 disables the endpoint in the same write: the job waits for it, so the endpoint's next
  // deliveries find it disabled and are cancelled without a request.
  if (verdict === "gone") await writes();
  else await deps.afterAnswer(writes);
  return outcome;
}

function scheduleAttempt(
  deps: DeliveryDeps,
  work: Pick<DeliveryWork, "id" | "tenantId" | "endpointId">,
  attemptNumber: number,
  dueAt?: number,
  manual = false,
) {
  return deps.producer.enqueue([
    {
      deliveryId: work.id,
      tenantId: work.tenantId,
      endpointId: work.endpointId,
      attemptNumber,
      ...(dueAt !== undefined && { dueAt }),
      ...(manual && { manual: true }),
    },
  ]);
}
