export type { ChangeSignals, SignalTopic } from "./change-signals.js";
export { coalescedLog } from "./coalesced-log.js";
export { inProcessSignals } from "./in-process-signals.js";
export { type Infrastructure, openInfrastructure, workerQueuesOf } from "./infrastructure.js";
export { createLogger, type Logger } from "./logger.js";
export { runMain } from "./main-guard.js";
export { createProcessMetrics, serveMetricsIfConfigured } from "./process-metrics.js";
export { onShutdownSignal } from "./shutdown.js";
