import type { HooklineConfig } from "@hookline/config";
import { createAddressPolicy, createHttpClient } from "@hookline/delivery";
import type { HooklineMetrics } from "@hookline/metrics";
import { type Infrastructure, type Logger, workerQueuesOf } from "@hookline/runtime";
import { type RunningWorker, startWorker } from "./worker.js";

/** Builds the worker from configuration: the HTTP client here, everything else from infra. */
export async function startWorkerFromConfig(
  config: HooklineConfig,
  infra: Infrastructure,
  log: Logger,
  hooks: { metrics?: HooklineMetrics; outageWaitMs?: number } = {},
): Promise<RunningWorker> {
  const http = createHttpClient({
    timeoutMs: config.delivery.timeoutMs,
    maxResponseBytes: config.delivery.maxResponseBytes,
    addressPolicy: createAddressPolicy({ allowedCidrs: config.delivery.allowedCidrs }),
    egressProxy: config.delivery.egressProxy,
  });
  const worker = await startWorker({
    db: infra.store.db,
    queueBackend: infra.queueBackend,
    producer: infra.producer,
    http,
    retry: { scheduleMs: config.delivery.retryScheduleMs, jitter: config.delivery.jitter },
    maxOpenQueues: workerQueuesOf(config),
    maxEndpointConcurrency: config.queue.endpointMaxConcurrency,
    sweeper: config.sweeper,
    maintenance: { ...config.maintenance, vacuum: infra.store.embedded },
    discoveryIntervalMs: config.queue.discoveryIntervalMs,
    idleCloseMs: config.queue.queueIdleMs,
    stalledAfterMs: config.queue.stalledAfterMs,
    log,
    attemptsRecorded: infra.signals.attemptsRecorded,
    ...hooks,
  });
  // Jobs added anywhere (this process's retries; the api's Emit, in this process or another) open
  // their queues at once, and so do new or re-enabled endpoints, instead of at the next scan.
  const unsubscribe: (() => void)[] = [];
  try {
    unsubscribe.push(await infra.signals.workFed.subscribe((fed) => worker.fed(fed)));
    unsubscribe.push(
      await infra.signals.endpointsChanged.subscribe(() => {
        worker.discover().catch((error: Error) => log.warn("discovery failed", { error: error.message }));
      }),
    );
  } catch (error) {
    for (const stop of unsubscribe) stop();
    await worker.close();
    await http.close();
    throw error;
  }
  return {
    discover: worker.discover,
    fed: worker.fed,
    get openQueues() {
      return worker.openQueues;
    },
    sweep: worker.sweep,
    maintain: worker.maintain,
    async close() {
      for (const stop of unsubscribe) stop();
      await worker.close();
      await http.close();
    },
  };
}
