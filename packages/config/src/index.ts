export { ConfigError, DEFAULT_RETRY_SCHEDULE, type HooklineConfig, loadConfig } from "./config.js";
export { parseDuration, parseDurationList } from "./duration.js";
export { parseRedisUrl, type RedisOptions } from "./redis-url.js";
