import { parseDuration, parseDurationList } from "./duration.js";
import { parseRedisUrl, type RedisOptions } from "./redis-url.js";

/** Everything Hookline's processes read from their environment, parsed and validated once. */
export interface HooklineConfig {
  /** Real PostgreSQL; undefined means embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  /** Redis for BullMQ; undefined means BullMQ's PostgreSQL backend on the store's database. */
  redis: RedisOptions | undefined;
  dataDir: string;
  api: { host: string; port: number };
  queue: {
    prefix: string;
    /** In-flight attempts per endpoint (per lane with lanes), across every worker process. */
    endpointConcurrency: number;
    /** 0: one queue per endpoint. N > 0: endpoints hashed onto N shared queues. */
    lanes: number;
    /** How long an idle PostgreSQL-backed worker waits before polling again. */
    pollIntervalMs: number;
    /** How often workers look for endpoints that need a consumer. */
    discoveryIntervalMs: number;
  };
  delivery: {
    timeoutMs: number;
    maxResponseBytes: number;
    /** Waits between attempts; attempts = waits + 1. */
    retryScheduleMs: number[];
    jitter: number;
  };
  /** Largest data_json an Emit accepts, in bytes. */
  maxDataBytes: number;
  sweeper: { intervalMs: number; graceMs: number };
}

/** Thrown with every problem found, each naming its variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
    this.name = "ConfigError";
  }
}

export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";

type Env = Readonly<Record<string, string | undefined>>;

/** Reads Hookline's configuration from an environment map (pass process.env in the apps). */
export function loadConfig(env: Env): HooklineConfig {
  const problems: string[] = [];
  const read = <T>(name: string, fallback: string, parse: (text: string) => T): T => {
    const raw = env[name];
    const text = raw === undefined || raw.trim() === "" ? fallback : raw.trim();
    try {
      return parse(text);
    } catch (error) {
      problems.push(`${name} ${errorText(error)}`);
      return parse(fallback);
    }
  };
  const int = (min: number, max: number) => (text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`must be a whole number from ${min} to ${max}`);
    return n;
  };
  const duration = (text: string) => parseDuration(text);

  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push("DATABASE_URL must start with postgres:// or postgresql://");
  }
  const redisUrl = nonEmpty(env.REDIS_URL);
  let redis: RedisOptions | undefined;
  if (redisUrl) {
    try {
      redis = parseRedisUrl(redisUrl);
    } catch (error) {
      problems.push(`REDIS_URL ${errorText(error)}`);
    }
  }
  const api = read("HOOKLINE_API_ADDR", "127.0.0.1:50051", parseAddress);
  const prefix = read("BULLMQ_PREFIX", "bull", (text) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(text)) throw new Error("may hold only letters, digits, '.', '_' and '-'");
    return text;
  });
  const retryScheduleMs = read("HOOKLINE_RETRY_SCHEDULE", DEFAULT_RETRY_SCHEDULE, (text) => {
    const waits = parseDurationList(text);
    if (waits.length > 50) throw new Error("may list at most 50 waits");
    return waits;
  });

  const config: HooklineConfig = {
    databaseUrl,
    redis,
    dataDir: read("HOOKLINE_DATA_DIR", "./.hookline", (text) => text),
    api,
    queue: {
      prefix,
      endpointConcurrency: read("HOOKLINE_ENDPOINT_CONCURRENCY", "2", int(1, 1000)),
      lanes: read("HOOKLINE_LANES", "0", int(0, 10_000)),
      pollIntervalMs: read("HOOKLINE_QUEUE_POLL_INTERVAL", "100ms", duration),
      discoveryIntervalMs: read("HOOKLINE_DISCOVERY_INTERVAL", "2s", duration),
    },
    delivery: {
      timeoutMs: read("HOOKLINE_DELIVERY_TIMEOUT_MS", "10000", int(1, 600_000)),
      maxResponseBytes: read("HOOKLINE_MAX_RESPONSE_BYTES", "4096", int(0, 1_048_576)),
      retryScheduleMs,
      jitter: read("HOOKLINE_RETRY_JITTER", "0.2", (text) => {
        const n = Number(text);
        if (!(n >= 0 && n < 1)) throw new Error("must be a fraction from 0 to below 1");
        return n;
      }),
    },
    maxDataBytes: read("HOOKLINE_MAX_EVENT_BYTES", "262144", int(1, 16 * 1024 * 1024)),
    sweeper: {
      intervalMs: read("HOOKLINE_SWEEP_INTERVAL", "15s", duration),
      graceMs: read("HOOKLINE_SWEEP_GRACE", "30s", duration),
    },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function parseAddress(text: string): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(text);
  const port = Number(match?.[2]);
  if (!match?.[1] || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`"${text}" is not host:port`);
  }
  return { host: match[1].replace(/^\[(.*)\]$/, "$1"), port };
}

function nonEmpty(text: string | undefined): string | undefined {
  return text && text.trim() !== "" ? text.trim() : undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
