import { Batcher } from "@hookline/batching";
import type { HttpClient, RetryPolicy } from "@hookline/delivery";
import { type HooklineMetrics, statusClassOf } from "@hookline/metrics";
import type { FedQueue, QueueBackend } from "@hookline/queue";
import { DeliveryConsumer, type DeliveryProducer } from "@hookline/queue";
import { type ChangeSignals, coalescedLog, type Logger } from "@hookline/runtime";
import {
  type AttemptResult,
  cancelDeliveries,
  type DeliveryWork,
  loadDeliveryWork,
  type RecordedAttempt,
  recordAttempts,
  type StoreDb,
} from "@hookline/store";
import { AdaptiveConcurrency } from "./adaptive-concurrency.js";
import { DeferredWrites } from "./deferred-writes.js";
import { watchDemand } from "./demand.js";
import { type MaintenanceResult, maintainOnce } from "./maintenance.js";
import { oneAtATime } from "./one-at-a-time.js";
import { processDelivery } from "./process-delivery.js";
import { loadOrStoreAway, StoreAwayError } from "./store-away.js";
import { type SweepWalk, sweeperStore, sweepOnce } from "./sweeper.js";

export interface WorkerDeps {
  db: StoreDb;
  queueBackend: QueueBackend;
  producer: DeliveryProducer;
  http: HttpClient;
  retry: RetryPolicy;
  /** Queues this process serves at once (each holds a connection while open). */
  maxOpenQueues: number;
  /** The most an adaptive endpoint limit may reach (HOOKLINE_ENDPOINT_MAX_CONCURRENCY); default 50. */
  maxEndpointConcurrency?: number;
  sweeper: { intervalMs: number; graceMs: number };
  maintenance: { intervalMs: number; disableAfterMs: number; retentionMs: number; vacuum?: boolean };
  /** How often to look in the store for queues with work due, whatever the signals said. */
  discoveryIntervalMs: number;
  /** An open queue with nothing in flight for this long is closed. */
  idleCloseMs?: number;
  /** Lock lifetime of an in-flight job; a dead worker's jobs run again after about 1.5 times this. */
  stalledAfterMs?: number;
  /** How long a queue waits after a job found the store away (5 s by default; tests shorten it). */
  outageWaitMs?: number;
  now?: () => number;
  random?: () => number;
  log?: Logger;
  /** Published after each batch of attempts is committed: WatchAttempts streams read them. */
  attemptsRecorded?: Pick<ChangeSignals["attemptsRecorded"], "publish">;
  metrics?: HooklineMetrics;
}

/** A running worker: consumes delivery queues, sweeps stranded deliveries, and stops cleanly. */
export interface RunningWorker {
  /** Looks in the store for queues with work due now (and re-reads their limits). */
  discover(): Promise<void>;
  /** Jobs were added to these queues (undefined: somewhere): open them if they are not. */
  fed(queues: FedQueue[] | undefined): void;
  /** Queues with a BullMQ Worker open in this process. */
  readonly openQueues: number;
  sweep(): Promise<number | undefined>;
  /** Runs auto-disable and retention now (they also run on a timer). */
  maintain(): Promise<MaintenanceResult | undefined>;
  close(): Promise<void>;
}

/**
 * Answers whose writes may be pending after their jobs have finished: one record batch (the
 * recorder's largest). More would only wait in memory behind the store.
 */
const DEFERRED_WRITES_MAX = 256;
/** After writes failed, jobs wait for their own this long (see DeferredWrites). */
const INLINE_AFTER_FAILURE_MS = 10_000;
/**
 * A delivery the sweeper finds with no job is put back if it is still so this much later: an
 * attempt is recorded within milliseconds of its job's end on a healthy store. One whose answer
 * this process is still recording is never put back; one another worker process answered, if its
 * record takes longer than this, is (and sent again: at least once).
 */
const SWEEP_CONFIRM_AFTER_MS = 1000;

export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? SILENT;
  // While Redis is away every open queue fails on every turn: ~700 lines a minute, seen in an
  // outage. The first is logged as it comes; the rest as a count a minute.
  const queueError = coalescedLog(
    (message, fields) => log.error(message, fields),
    "queue error",
    "more queue errors",
  );
  // In a store outage every open queue's next job finds it away: the first is logged, then a count.
  const storeAway = coalescedLog(
    (message, fields) => log.warn(message, fields),
    "the database is unavailable; a queue whose job found it so waits 5 s and tries again",
    "more jobs found the database unavailable",
  );
  // One load in flight, like the recorder: jobs that start meanwhile share the next one. Two in
  // flight made batches half as big for no gain on servers, and embedded (one PGlite session runs
  // every statement) delivered about 12% less.
  const loader = new Batcher<string, DeliveryWork | undefined>(async (ids) => {
    const rows = new Map((await loadDeliveryWork(deps.db, ids)).map((work) => [work.id, work]));
    return ids.map((id) => rows.get(id));
  });
  const recorder = new Batcher<AttemptResult, RecordedAttempt | undefined>(async (results) => {
    const recorded = await recordAttempts(deps.db, results, new Date(now()));
    if (recorded.some((attempt) => attempt !== undefined)) deps.attemptsRecorded?.publish();
    if (deps.metrics) countRecorded(deps.metrics, results, recorded);
    return recorded;
  });
  // In an outage every retry's add fails: the first is logged, the rest counted once a minute.
  const deferredWriteFailed = coalescedLog(
    (message, fields) => log.warn(message, fields),
    "writes after an attempt failed; the sweeper puts the delivery back on its queue",
    "more writes after attempts failed",
  );
  const deferred = new DeferredWrites({
    max: DEFERRED_WRITES_MAX,
    inlineAfterFailureMs: INLINE_AFTER_FAILURE_MS,
    onError: (error, job) => deferredWriteFailed({ ...job, error: error.message }),
    now,
  });
  // The limits learn from the consumer's attempts and hand it their changes (it is built next).
  const adaptive: AdaptiveConcurrency = new AdaptiveConcurrency({
    max: deps.maxEndpointConcurrency ?? 50,
    now,
    readConcurrency: (queue) => deps.producer.readConcurrency(queue),
    readInFlight: (queue) => deps.producer.readInFlight(queue),
    writeQueueLimits: (queue, limits, how) => deps.producer.writeQueueLimits(queue, limits, how),
    apply: (queue, limits) => consumer.updateLimits([{ queue, limits }]),
    isOpen: (queue) => consumer.isOpen(queue),
  });
  deps.metrics?.trackConcurrencyLimits(() => adaptive.limits());
  deps.metrics?.trackPendingAttemptWrites(() => deferred.size);
  const consumer: DeliveryConsumer = new DeliveryConsumer(
    deps.queueBackend,
    (job, queue, held) =>
      adaptive.track(queue, () =>
        processDelivery(
          {
            loadWork: (id) => loadOrStoreAway(() => loader.add(id)),
            recordAttempt: (result) => recorder.add(result),
            cancel: async (id) => {
              const cancelled = await cancelDeliveries(deps.db, [id], new Date(now()));
              if (cancelled.length > 0)
                deps.metrics?.deliveries.inc({ outcome: "cancelled" }, cancelled.length);
            },
            afterAnswer: (writes) => deferred.run({ queue, deliveryId: job.deliveryId }, writes),
            stillHeld: async () => {
              if (await held()) return true;
              log.warn(
                "delivery job no longer held (the queue lost it, or gave it to another worker); it sends nothing",
                {
                  queue,
                  deliveryId: job.deliveryId,
                  attemptNumber: job.attemptNumber,
                },
              );
              return false;
            },
            producer: deps.producer,
            http: deps.http,
            retry: deps.retry,
            now,
            random: deps.random ?? Math.random,
            ...(deps.metrics && {
              attemptStarted: (kind, lateMs) =>
                deps.metrics?.attemptStartDelay.observe({ kind }, lateMs / 1000),
            }),
          },
          job,
        ),
      ),
    {
      maxOpenQueues: deps.maxOpenQueues,
      idleCloseMs: deps.idleCloseMs ?? 2000,
      turnMs: 2000,
      stalledAfterMs: deps.stalledAfterMs ?? 15_000,
      onError: (error, queue) => queueError({ queue, error: error.message }),
      // Its attempt may already have reached the receiver: the receiver sees it twice (same
      // webhook-id), the attempt log once. Worth a line, since it explains a duplicate.
      onStalled: (jobId, queue) =>
        log.warn("delivery job stalled (its lock lapsed); it runs again", { queue, jobId }),
      writesPending: (queue) => deferred.hasPending(queue),
      isOutage: (error) => error instanceof StoreAwayError,
      ...(deps.outageWaitMs !== undefined && { outageWaitMs: deps.outageWaitMs }),
      onOutage: (error, queue) =>
        storeAway({ queue, error: error instanceof Error ? error.message : String(error) }),
      onJobFailed: (jobId, error, queue) =>
        log.warn("delivery job failed on our side; BullMQ runs it again", {
          queue,
          jobId,
          error: error.message,
        }),
      now,
    },
    adaptive,
  );
  const demand = watchDemand({
    db: deps.db,
    routing: deps.producer.routing,
    consumer,
    now,
    resolveLimits: (queue, limits, origin) => adaptive.resolve(queue, limits, origin),
    intervalMs: deps.discoveryIntervalMs,
    onError: (error) => log.warn("discovery failed", { error: error.message }),
  });
  const discover = async () => {
    await demand.scan();
    await consumer.ready();
  };
  const sweepStore = sweeperStore(deps.db);
  const sweepWalk: SweepWalk = { after: undefined };
  const sweeps = oneAtATime(async () => {
    const count = await sweepOnce({
      store: sweepStore,
      producer: deps.producer,
      now,
      graceMs: deps.sweeper.graceMs,
      walk: sweepWalk,
      confirmAfterMs: SWEEP_CONFIRM_AFTER_MS,
      recording: (deliveryId) => deferred.isRecording(deliveryId),
    });
    if (count) {
      deps.metrics?.sweeperReenqueued.inc(count);
      log.info("sweeper re-enqueued stranded deliveries", { count });
    }
    return count;
  });

  const maintenance = oneAtATime(async () => {
    const result = await maintainOnce({ db: deps.db, now, ...deps.maintenance });
    for (const endpoint of result?.disabled ?? [])
      log.warn("endpoint disabled after failing too long", endpoint);
    if (result?.purged) log.info("retention purged old rows", { rows: result.purged });
    return result;
  });

  await discover();
  const timers = [
    setInterval(
      () => sweeps.tick()?.catch((error: Error) => log.error("sweep failed", { error: error.message })),
      deps.sweeper.intervalMs,
    ),
    setInterval(
      () =>
        maintenance
          .tick()
          ?.catch((error: Error) => log.error("maintenance failed", { error: error.message })),
      deps.maintenance.intervalMs,
    ),
  ];
  for (const timer of timers) timer.unref();

  let closed: Promise<void> | undefined;
  return {
    discover,
    fed: (queues) => demand.fed(queues),
    get openQueues() {
      return consumer.openQueueCount;
    },
    sweep: sweeps.run,
    maintain: maintenance.run,
    close() {
      closed ??= (async () => {
        for (const timer of timers) clearInterval(timer);
        demand.close();
        adaptive.close();
        await consumer.close();
        await deferred.drain();
      })();
      return closed;
    },
  };
}

const SILENT: Logger = { info() {}, warn() {}, error() {} };

function countRecorded(
  metrics: HooklineMetrics,
  results: AttemptResult[],
  recorded: (RecordedAttempt | undefined)[],
): void {
  for (const [i, result] of results.entries()) {
    const attempt = recorded[i];
    if (attempt === undefined) continue;
    metrics.attempts.inc({ status_class: statusClassOf(result.responseStatus) });
    metrics.attemptDuration.observe(result.durationMs / 1000);
    // Cancelled while its attempt was under way (its endpoint deleted) and still cancelled, even by
    // a 410 of its own: whoever cancelled it first counted it.
    const countedAlready = attempt.deliveryStatus === "cancelled" && attempt.wasCancelled;
    if (attempt.deliveryStatus !== "pending" && !countedAlready)
      metrics.deliveries.inc({ outcome: attempt.deliveryStatus });
  }
}
