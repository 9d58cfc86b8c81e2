export {
  ConfigError,
  type ConnectionLimits,
  DEFAULT_RETRY_SCHEDULE,
  type HooklineConfig,
  loadConfig,
  PORTAL_TOKEN_PREFIX,
} from "./config.js";
export { parseDuration, parseDurationList } from "./duration.js";
export { parseRedisUrl, type RedisOptions } from "./redis-url.js";
