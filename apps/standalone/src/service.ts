import { type ApiServer, startApiFromConfig } from "@hookline/api";
import type { HooklineConfig } from "@hookline/config";
import type { HooklineMetrics } from "@hookline/metrics";
import {
  createProcessMetrics,
  type Infrastructure,
  type Logger,
  openInfrastructure,
  serveMetricsIfConfigured,
} from "@hookline/runtime";
import { type RunningWorker, startWorkerFromConfig } from "@hookline/worker";

/** The api and a worker sharing one process, one store and one queue backend. */
export interface Service {
  readonly api: ApiServer;
  readonly worker: RunningWorker;
  readonly infra: Infrastructure;
  readonly metrics: HooklineMetrics;
  /** host:port of the api. */
  readonly address: string;
  /** The /metrics port, when HOOKLINE_METRICS_ADDR is set. */
  readonly metricsPort: number | undefined;
  close(): Promise<void>;
}

export async function startService(config: HooklineConfig, log: Logger): Promise<Service> {
  const infra = await openInfrastructure(config, log);
  let worker: RunningWorker | undefined;
  let api: ApiServer | undefined;
  let metricsServer: Awaited<ReturnType<typeof serveMetricsIfConfigured>>;
  try {
    // The worker and the api tell each other through infra.signals: at once in process, and on a
    // real PostgreSQL also to other processes sharing the database.
    const metrics = createProcessMetrics(config, infra, log, () => api?.openStreams ?? 0);
    // First: a metrics address in use stops the service before it takes a call.
    metricsServer = await serveMetricsIfConfigured(config, metrics);
    worker = await startWorkerFromConfig(config, infra, log, { metrics });
    const running = worker;
    api = await startApiFromConfig(config, infra, log, { metrics });
    const runningApi = api;
    const runningMetrics = metricsServer;
    let closed: Promise<void> | undefined;
    return {
      api: runningApi,
      worker: running,
      infra,
      metrics,
      address: `${runningApi.host}:${runningApi.port}`,
      metricsPort: runningMetrics?.port,
      close() {
        // Stop taking calls, then let in-flight attempts finish, then release connections. The
        // api is told first, as close() is called (see ApiServer.close).
        closed ??= (async () => {
          await runningApi.close();
          await runningMetrics?.close();
          await running.close();
          await infra.close();
        })();
        return closed;
      },
    };
  } catch (error) {
    // Whatever fails to close, the start's own error is the one to report.
    await Promise.allSettled([api?.close(), metricsServer?.close(), worker?.close()]);
    await infra.close().catch(() => {});
    throw error;
  }
}
