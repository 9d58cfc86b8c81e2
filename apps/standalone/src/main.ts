import { startApiFromConfig } from "@hookline/api";
import { loadConfig } from "@hookline/config";
import { createLogger, onShutdownSignal, openInfrastructure } from "@hookline/runtime";
import { startWorkerFromConfig } from "@hookline/worker";

// The api and a worker in ONE process: the embedded default (PGlite's data directory belongs to
// one process), and also a simple single-machine deployment on PostgreSQL/Redis.
const log = createLogger("hookline");
const config = loadConfig(process.env);
const infra = await openInfrastructure(config, log);
const worker = await startWorkerFromConfig(config, infra, log);
const server = await startApiFromConfig(config, infra, log, () => {
  worker.discover().catch((error: Error) => log.warn("discovery failed", { error: error.message }));
});
log.info("hookline ready", {
  address: `${server.host}:${server.port}`,
  store: config.databaseUrl ? "postgresql" : `embedded PGlite in ${config.dataDir}`,
  queue: infra.queueBackend.kind,
});
onShutdownSignal(async () => {
  await server.close();
  await worker.close();
  await infra.close();
}, log.info);
