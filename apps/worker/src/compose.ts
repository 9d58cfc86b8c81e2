import type { HooklineConfig } from "@hookline/config";
import { createHttpClient } from "@hookline/delivery";
import type { Infrastructure, Logger } from "@hookline/runtime";
import { type RunningWorker, startWorker } from "./worker.js";

/** Builds the worker from configuration: the HTTP client here, everything else from infra. */
export async function startWorkerFromConfig(
  config: HooklineConfig,
  infra: Infrastructure,
  log: Logger,
): Promise<RunningWorker> {
  const http = createHttpClient({
    timeoutMs: config.delivery.timeoutMs,
    maxResponseBytes: config.delivery.maxResponseBytes,
  });
  const worker = await startWorker({
    db: infra.store.db,
    queueBackend: infra.queueBackend,
    producer: infra.producer,
    http,
    retry: { scheduleMs: config.delivery.retryScheduleMs, jitter: config.delivery.jitter },
    lanes: config.queue.lanes,
    endpointConcurrency: config.queue.endpointConcurrency,
    sweeper: config.sweeper,
    discoveryIntervalMs: config.queue.discoveryIntervalMs,
    log: (message, fields) => log.info(message, fields),
  });
  return {
    ...worker,
    async close() {
      await worker.close();
      await http.close();
    },
  };
}
