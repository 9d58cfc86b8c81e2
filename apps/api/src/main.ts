import { loadConfig } from "@hookline/config";
import { createLogger, onShutdownSignal, openInfrastructure } from "@hookline/runtime";
import { startApiFromConfig } from "./compose.js";

// An api process: serves the RPCs; never POSTs to customers. Run as many as wanted with DATABASE_URL set.
const log = createLogger("api");
const config = loadConfig(process.env);
if (!config.databaseUrl) {
  log.error(
    "the api runs as its own process only with DATABASE_URL set; use `pnpm start` for the embedded service",
  );
  process.exit(2);
}
const infra = await openInfrastructure(config, log);
const server = await startApiFromConfig(config, infra, log);
log.info("api listening", { address: `${server.host}:${server.port}`, queue: infra.queueBackend.kind });
onShutdownSignal(async () => {
  await server.close();
  await infra.close();
}, log.info);
