import { loadConfig } from "@hookline/config";
import { createLogger, onShutdownSignal, openInfrastructure, runMain } from "@hookline/runtime";
import { CHANNELS, listen } from "@hookline/store";
import { startWorkerFromConfig } from "./compose.js";

// A worker process: consumes delivery queues until SIGTERM. Run as many as wanted with DATABASE_URL set.
const log = createLogger("worker");
await runMain(log, async () => {
  const config = loadConfig(process.env);
  if (!config.databaseUrl) {
    throw new Error("a separate worker process needs DATABASE_URL; `pnpm start` runs the embedded service");
  }
  const infra = await openInfrastructure(config, log);
  const worker = await startWorkerFromConfig(config, infra, log);
  const endpointSignals = await listen(
    infra.store.pgConfig,
    CHANNELS.endpoints,
    () => worker.discover().catch((error: Error) => log.warn("discovery failed", { error: error.message })),
    (error) => log.warn("endpoint signal connection lost; reconnecting", { error: error.message }),
  );
  log.info("worker ready", { queue: infra.queueBackend.kind });
  onShutdownSignal(async () => {
    await endpointSignals.close();
    await worker.close();
    await infra.close();
  }, log.info);
});
