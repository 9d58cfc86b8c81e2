export {
  BACKLOG_READ_BUDGET_MS,
  BACKLOG_READ_EVERY_MS,
  type BacklogGaugeOptions,
  NAMED_QUEUES,
  type QueueBacklog,
} from "./backlog-gauges.js";
export { HooklineMetrics, type StatusClass, statusClassOf } from "./metrics.js";
export { serveMetrics } from "./server.js";
