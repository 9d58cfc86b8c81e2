import { loadConfig } from "@hookline/config";
import {
  createLogger,
  createProcessMetrics,
  onShutdownSignal,
  openInfrastructure,
  runMain,
  serveMetricsIfConfigured,
} from "@hookline/runtime";
import { startWorkerFromConfig } from "./compose.js";
import { type ReadinessChecks, startHealthServer, workerReadiness } from "./health-server.js";

// A worker process: consumes delivery queues until SIGTERM. Run as many as wanted with DATABASE_URL set.
const log = createLogger("worker");
await runMain(log, async () => {
  const config = loadConfig(process.env);
  if (!config.databaseUrl) {
    throw new Error("a separate worker process needs DATABASE_URL; `pnpm start` runs the embedded service");
  }
  // Up before the store and queue so liveness answers during start-up; /readyz waits for them.
  let readiness: ReadinessChecks | undefined;
  const health =
    config.workerHealth && (await startHealthServer({ ...config.workerHealth, readiness: () => readiness }));
  if (health) log.info("worker health listening", { address: `${health.host}:${health.port}` });
  const infra = await openInfrastructure(config, log);
  const metrics = createProcessMetrics(config, infra, log);
  const metricsServer = await serveMetricsIfConfigured(config, metrics);
  const worker = await startWorkerFromConfig(config, infra, log, { metrics });
  readiness = workerReadiness(infra);
  log.info("worker ready", {
    queue: infra.queueBackend.kind,
    ...(health && { health: `${health.host}:${health.port}` }),
    ...(metricsServer && { metrics: metricsServer.port }),
    storedFunctions: infra.store.storedFunctions,
  });
  onShutdownSignal(async () => {
    await health?.close();
    await metricsServer?.close();
    await worker.close();
    await infra.close();
  }, log.info);
});
