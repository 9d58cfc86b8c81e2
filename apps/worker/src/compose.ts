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
  hooks: { onAttemptsRecorded?: () => void; metrics?: HooklineMetrics } = {},
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
    ...hooks,
  });
  // Jobs this process adds (its retries; in the embedded service, every Emit) open their queues at once.
  infra.onFed((fed) => worker.fed(fed));
  return {
    discover: worker.discover,
    fed: worker.fed,
    get openQueues() {
      return worker.openQueues;
    },
    sweep: worker.sweep,
    maintain: worker.maintain,
    async close() {
      await worker.close();
      await http.close();
    },
  };
}
