export {
  ConfigError,
  type ConnectionLimits,
  DEFAULT_RETRY_SCHEDULE,
  type HooklineConfig,
  loadConfig,
} from "./config.js";
export { parseDuration, parseDurationList } from "./duration.js";
export { parseRedisUrl, type RedisOptions } from "./redis-url.js";
