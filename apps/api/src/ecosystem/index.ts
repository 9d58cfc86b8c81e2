import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  file_google_rpc_error_details,
  Health,
  ServerReflection,
  ServerReflectionV1alpha,
} from "@hookline/contracts";
import { createDescriptorIndex } from "./descriptor-index.js";
import { healthService } from "./health.js";
import { DEFAULT_HEALTH_OPTIONS, HealthMonitor, type HealthMonitorOptions } from "./health-monitor.js";
import type { HealthWatchSlots } from "./health-watch-slots.js";
import { registerReflection } from "./reflection.js";

export interface EcosystemOptions {
  /** Whether the store answers; the services are NOT_SERVING while it does not. */
  checkStore(): Promise<boolean>;
  /** Slots for Health.Watch streams, apart from WatchAttempts'. */
  healthWatches: HealthWatchSlots;
  health?: HealthMonitorOptions;
}

/**
 * Adds gRPC health checking and server reflection (v1 and v1alpha) for every service registered
 * on the router so far: call it after the Hookline services.
 */
export function registerEcosystem(router: ConnectRouter, options: EcosystemOptions): void {
  const served = new Map<string, DescService>();
  for (const handler of router.handlers) served.set(handler.service.typeName, handler.service);
  const monitor = new HealthMonitor(options.checkStore, options.health ?? DEFAULT_HEALTH_OPTIONS);
  router.service(Health, healthService(monitor, [...served.keys()], options.healthWatches));
  // error_details.proto is not imported by any service, but clients decode error details with it.
  const index = createDescriptorIndex(
    [...served.values(), Health, ServerReflection, ServerReflectionV1alpha],
    [file_google_rpc_error_details],
  );
  registerReflection(router, index);
}
