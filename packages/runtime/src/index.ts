export { type Infrastructure, openInfrastructure } from "./infrastructure.js";
export { createLogger, type Logger } from "./logger.js";
export { runMain } from "./main-guard.js";
export { createProcessMetrics, serveMetricsIfConfigured } from "./process-metrics.js";
export { createSignal, type Signal } from "./signal.js";
export { onShutdownSignal } from "./signals.js";
export { decodeWorkNews, encodeWorkNews } from "./work-news.js";
