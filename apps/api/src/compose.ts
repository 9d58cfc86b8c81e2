import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { HooklineConfig } from "@hookline/config";
import { createAddressPolicy } from "@hookline/delivery";
import type { HooklineMetrics } from "@hookline/metrics";
import type { Infrastructure, Logger } from "@hookline/runtime";
import { generateSecret } from "@hookline/signing";
import { ping } from "@hookline/store";
import { startApiServer } from "./api.js";
import { AttemptFeed, storeAttemptSource } from "./attempt-feed.js";
import { HealthWatchSlots } from "./ecosystem/health-watch-slots.js";
import { createEmitBatcher } from "./emit-batcher.js";
import { exitAfterCommits } from "./fault-exit.js";
import { isLoopback } from "./loopback.js";
import type { ListeningServer } from "./server.js";
import { StreamLimiter } from "./stream-limiter.js";

// The console app's build output, beside this package in the workspace (apps/console/dist).
const CONSOLE_DIR = fileURLToPath(new URL("../../console/dist/", import.meta.url));

/** A running api. */
export interface ApiServer extends ListeningServer {
  /** WatchAttempts streams currently open. */
  readonly openStreams: number;
  /**
   * Stops taking calls and closes once those under way have answered (or after a bound). Calls
   * working through a backlog are told to stop at their next page when this is called.
   */
  close(): Promise<void>;
}

/** Builds and starts the api from configuration; RPCs are counted in hooks.metrics when given. */
export async function startApiFromConfig(
  config: HooklineConfig,
  infra: Infrastructure,
  log: Logger,
  hooks: { metrics?: HooklineMetrics } = {},
): Promise<ApiServer> {
  refuseOpenExposure(config);
  const attemptFeed = new AttemptFeed(storeAttemptSource(infra.store.db), {
    bufferLimit: config.watchBufferLimit,
    safetyPollMs: config.watchPollIntervalMs,
  });
  const now = () => new Date();
  const stopping = new AbortController();
  const unsubscribe = await infra.signals.attemptsRecorded.subscribe(() => attemptFeed.wake());
  let server: Awaited<ReturnType<typeof startApiServer>>;
  try {
    server = await startApiServer(
      {
        db: infra.store.db,
        producer: infra.producer,
        attemptFeed,
        streams: new StreamLimiter(config.streams),
        healthWatches: new HealthWatchSlots(config.maxHealthWatches),
        maxResponseBytes: config.delivery.maxResponseBytes,
        addressPolicy: createAddressPolicy({ allowedCidrs: config.delivery.allowedCidrs }),
        maxDataBytes: config.maxDataBytes,
        maxEndpointsPerTenant: config.maxEndpointsPerTenant,
        now,
        // Without a configured key, links last as long as this process (documented in the README).
        portalKey: config.portalKey ? Buffer.from(config.portalKey) : randomBytes(32),
        generateSecret: () => generateSecret(),
        // Workers, in this process or others, serve a new endpoint's queue at once, not at their next scan.
        onEndpointsChanged: () => infra.signals.endpointsChanged.publish(),
        ...(hooks.metrics && {
          onCancelled: (count: number) => hooks.metrics?.deliveries.inc({ outcome: "cancelled" }, count),
        }),
        checkStore: () => ping(infra.store.db),
        log,
        stopping: stopping.signal,
        ...(config.faultExitAfterCommit > 0 && {
          emitEvent: exitAfterCommits(createEmitBatcher(infra.store.db, now), config.faultExitAfterCommit),
        }),
      },
      {
        ...config.api,
        tokens: config.apiTokens,
        anyHost: config.insecureNoAuth,
        limits: config.connections,
        consoleDir: CONSOLE_DIR,
        ...(hooks.metrics && { metrics: hooks.metrics }),
      },
    );
  } catch (error) {
    unsubscribe();
    attemptFeed.close();
    throw error;
  }
  return {
    host: server.host,
    port: server.port,
    get openStreams() {
      return attemptFeed.openStreams;
    },
    async close() {
      // Before the first await, so calls under way are told as close() is called.
      stopping.abort();
      // Ending the streams first lets the HTTP/2 sessions close promptly.
      unsubscribe();
      attemptFeed.close();
      await server.close();
    },
  };
}

/** An api reachable beyond this machine must ask for tokens, unless the operator says otherwise. */
function refuseOpenExposure(config: HooklineConfig): void {
  if (config.apiTokens.length > 0 || config.insecureNoAuth || isLoopback(config.api.host)) return;
  throw new Error(
    `refusing to serve ${config.api.host} without HOOKLINE_API_TOKENS; ` +
      "set HOOKLINE_INSECURE_NO_AUTH=1 to serve it unauthenticated knowingly",
  );
}
