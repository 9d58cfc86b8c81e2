export { type Infrastructure, openInfrastructure } from "./infrastructure.js";
export { createLogger, type Logger } from "./logger.js";
export { onShutdownSignal } from "./signals.js";
export { runMain } from "./main-guard.js";
