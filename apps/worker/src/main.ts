import { loadConfig } from "@hookline/config";
import { createLogger, onShutdownSignal, openInfrastructure } from "@hookline/runtime";
import { startWorkerFromConfig } from "./compose.js";

// A worker process: consumes delivery queues until SIGTERM. Run as many as wanted with DATABASE_URL set.
const log = createLogger("worker");
const config = loadConfig(process.env);
if (!config.databaseUrl) {
  log.error(
    "the worker runs as its own process only with DATABASE_URL set; use `pnpm start` for the embedded service",
  );
  process.exit(2);
}
const infra = await openInfrastructure(config, log);
const worker = await startWorkerFromConfig(config, infra, log);
log.info("worker ready", { backend: infra.queueBackend.kind });
onShutdownSignal(async () => {
  await worker.close();
  await infra.close();
}, log.info);
