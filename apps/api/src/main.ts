import { loadConfig } from "@hookline/config";
import {
  createLogger,
  createProcessMetrics,
  createSignal,
  onShutdownSignal,
  openInfrastructure,
  runMain,
  serveMetricsIfConfigured,
} from "@hookline/runtime";
import { CHANNELS, listen, notify } from "@hookline/store";
import { startApiFromConfig } from "./compose.js";

// An api process: serves the RPCs; never POSTs to customers. Run as many as wanted with DATABASE_URL set.
const log = createLogger("api");
await runMain(log, async () => {
  const config = loadConfig(process.env);
  if (!config.databaseUrl) {
    throw new Error("a separate api process needs DATABASE_URL; `pnpm start` runs the embedded service");
  }
  const infra = await openInfrastructure(config, log);
  // Worker processes record attempts and NOTIFY; this process relays that to its streams.
  const attempts = createSignal();
  const attemptSignals = await listen(
    infra.store.pgConfig,
    CHANNELS.attempts,
    () => attempts.notify(),
    (error) => log.warn("attempt signal connection lost; reconnecting", { error: error.message }),
  );
  // Workers in other processes start serving a new endpoint's queue when told, not at their next poll.
  const server = await startApiFromConfig(config, infra, log, {
    attempts,
    onEndpointsChanged: () => {
      notify(infra.store.db, CHANNELS.endpoints).catch((error: Error) =>
        log.warn("could not signal workers", { error: error.message }),
      );
    },
  });
  const metricsServer = await serveMetricsIfConfigured(
    config,
    createProcessMetrics(infra.producer.routing, infra.store.db, () => server.openStreams),
  );
  log.info("api listening", {
    address: `${server.host}:${server.port}`,
    queue: infra.queueBackend.kind,
    ...(metricsServer && { metrics: metricsServer.port }),
  });
  onShutdownSignal(async () => {
    await metricsServer?.close();
    await server.close();
    await attemptSignals.close();
    await infra.close();
  }, log.info);
});
