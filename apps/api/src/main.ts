import { loadConfig } from "@hookline/config";
import {
  createLogger,
  createProcessMetrics,
  onShutdownSignal,
  openInfrastructure,
  runMain,
  serveMetricsIfConfigured,
} from "@hookline/runtime";
import { type ApiServer, startApiFromConfig } from "./compose.js";

// An api process: serves the RPCs; never POSTs to customers. Run as many as wanted with DATABASE_URL set.
const log = createLogger("api");
await runMain(log, async () => {
  const config = loadConfig(process.env);
  if (!config.databaseUrl) {
    throw new Error("a separate api process needs DATABASE_URL; `pnpm start` runs the embedded service");
  }
  const infra = await openInfrastructure(config, log);
  let server: ApiServer | undefined;
  const metrics = createProcessMetrics(config, infra, log, () => server?.openStreams ?? 0);
  // First: a metrics address in use stops the api before it takes a call.
  const metricsServer = await serveMetricsIfConfigured(config, metrics);
  server = await startApiFromConfig(config, infra, log, { metrics });
  // The metrics read openStreams before the server exists; from here on it always does.
  const running = server;
  log.info("api listening", {
    address: `${running.host}:${running.port}`,
    queue: infra.queueBackend.kind,
    ...(metricsServer && { metrics: metricsServer.port }),
    // What an operator keeps when dropping other versions' functions (see the README).
    storedFunctions: infra.store.storedFunctions,
  });
  onShutdownSignal(async () => {
    await running.close();
    await metricsServer?.close();
    await infra.close();
  }, log.info);
});
