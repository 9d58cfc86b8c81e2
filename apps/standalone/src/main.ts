import { loadConfig } from "@hookline/config";
import { createLogger, onShutdownSignal, runMain } from "@hookline/runtime";
import { startService } from "./service.js";

// The api and a worker in ONE process: the embedded default (PGlite's data directory belongs to
// one process), and also a simple single-machine deployment on PostgreSQL and Redis.
const log = createLogger("hookline");
await runMain(log, async () => {
  const config = loadConfig(process.env);
  const service = await startService(config, log);
  log.info("hookline ready", {
    address: service.address,
    store: config.databaseUrl ? "postgresql" : `embedded PGlite in ${config.dataDir}`,
    queue: service.infra.queueBackend.kind,
    ...(service.metricsPort !== undefined && { metrics: service.metricsPort }),
    // On a shared PostgreSQL, what an operator keeps when dropping other versions' functions.
    ...(config.databaseUrl && { storedFunctions: service.infra.store.storedFunctions }),
  });
  onShutdownSignal(() => service.close(), log.info);
});
