export { HooklineMetrics, type QueueBacklog, type StatusClass, statusClassOf } from "./metrics.js";
export { serveMetrics } from "./server.js";
