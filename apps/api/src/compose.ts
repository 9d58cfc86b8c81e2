import type { HooklineConfig } from "@hookline/config";
import type { Infrastructure, Logger } from "@hookline/runtime";
import { generateSecret } from "@hookline/signing";
import { startApiServer } from "./api.js";
import type { ListeningServer } from "./server.js";

/** Builds and starts the api from configuration. */
export function startApiFromConfig(
  config: HooklineConfig,
  infra: Infrastructure,
  log: Logger,
  onEndpointsChanged?: () => void,
): Promise<ListeningServer> {
  return startApiServer(
    {
      db: infra.store.db,
      producer: infra.producer,
      maxDataBytes: config.maxDataBytes,
      now: () => new Date(),
      generateSecret: () => generateSecret(),
      ...(onEndpointsChanged && { onEndpointsChanged }),
      log: (message, fields) => log.error(message, fields),
    },
    config.api,
  );
}
