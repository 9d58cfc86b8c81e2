import type { HooklineConfig } from "@hookline/config";
import { HooklineMetrics, type QueueBacklog, serveMetrics } from "@hookline/metrics";
import { pendingByEndpoint } from "@hookline/store";
import type { Infrastructure } from "./infrastructure.js";
import type { Logger } from "./logger.js";

/**
 * This process's metrics: the backlog per queue read from the store every
 * HOOKLINE_METRICS_BACKLOG_EVERY, open streams if it serves any, and the embedded database's busy
 * time when it runs one.
 */
export function createProcessMetrics(
  config: HooklineConfig,
  infra: Pick<Infrastructure, "store" | "producer">,
  log: Logger,
  openStreams?: () => number,
): HooklineMetrics {
  const { db } = infra.store;
  const { routing } = infra.producer;
  const read = async () => {
    const now = Date.now();
    const byQueue = new Map<string, QueueBacklog>();
    for (const row of await pendingByEndpoint(db)) {
      const queue = routing.queueOf(row);
      const entry = byQueue.get(queue) ?? { queue, pending: 0, oldestDueAt: Number.POSITIVE_INFINITY };
      entry.pending += row.pending;
      entry.oldestDueAt = Math.min(entry.oldestDueAt, row.oldestDue?.getTime() ?? now);
      byQueue.set(queue, entry);
    }
    return [...byQueue.values()];
  };
  const metrics = new HooklineMetrics({
    backlog: {
      read,
      everyMs: config.metricsBacklogEveryMs,
      onError: (error) => log.warn("metrics: backlog not read", { error: error.message }),
    },
    ...(openStreams && { openStreams }),
  });
  const { engineBusySeconds } = infra.store;
  if (engineBusySeconds) metrics.trackEmbeddedEngine(engineBusySeconds);
  return metrics;
}

/** Serves /metrics when HOOKLINE_METRICS_ADDR is set; returns how to stop it. */
export async function serveMetricsIfConfigured(
  config: HooklineConfig,
  metrics: HooklineMetrics,
): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const address = config.metrics;
  if (!address) return undefined;
  return serveMetrics(metrics.registry, address).catch((error: NodeJS.ErrnoException) => {
    const why = error.code === "EADDRINUSE" ? "address in use" : error.message;
    throw new Error(`HOOKLINE_METRICS_ADDR ${address.host}:${address.port}: ${why}`, { cause: error });
  });
}
