import type { HooklineConfig } from "@hookline/config";
import { HooklineMetrics, serveMetrics } from "@hookline/metrics";
import type { QueueRouting } from "@hookline/queue";
import { pendingByEndpoint, type StoreDb } from "@hookline/store";

/** This process's metrics: the backlog per queue read from the store, and open streams if it serves any. */
export function createProcessMetrics(
  routing: QueueRouting,
  db: StoreDb,
  openStreams?: () => number,
): HooklineMetrics {
  return new HooklineMetrics({
    backlog: async () => {
      const now = Date.now();
      const byQueue = new Map<string, { pending: number; oldestDue: number }>();
      for (const row of await pendingByEndpoint(db)) {
        const queue = routing.queueOf(row);
        const entry = byQueue.get(queue) ?? { pending: 0, oldestDue: Number.POSITIVE_INFINITY };
        entry.pending += row.pending;
        entry.oldestDue = Math.min(entry.oldestDue, row.oldestDue?.getTime() ?? now);
        byQueue.set(queue, entry);
      }
      return [...byQueue].map(([queue, entry]) => ({
        queue,
        pending: entry.pending,
        oldestPendingAgeSeconds: Math.max(0, (now - entry.oldestDue) / 1000),
      }));
    },
    ...(openStreams && { openStreams }),
  });
}

/** Serves /metrics when HOOKLINE_METRICS_ADDR is set; returns how to stop it. */
export async function serveMetricsIfConfigured(
  config: HooklineConfig,
  metrics: HooklineMetrics,
): Promise<{ port: number; close(): Promise<void> } | undefined> {
  return config.metrics ? serveMetrics(metrics.registry, config.metrics) : undefined;
}
