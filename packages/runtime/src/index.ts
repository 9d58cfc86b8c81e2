export { createSignal, type Signal } from "./change-signal.js";
export { type Infrastructure, openInfrastructure, workerQueuesOf } from "./infrastructure.js";
export { createLogger, type Logger } from "./logger.js";
export { runMain } from "./main-guard.js";
export { createProcessMetrics, serveMetricsIfConfigured } from "./process-metrics.js";
export { onShutdownSignal } from "./shutdown.js";
export { decodeWorkNews, encodeWorkNews } from "./work-news.js";
