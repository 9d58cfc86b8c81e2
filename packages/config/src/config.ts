import { isIP } from "node:net";
import { parseDuration, parseRetrySchedule } from "./duration.js";
import { parseRedisUrl, type RedisOptions } from "./redis-url.js";

const DAY_MS = 86_400_000;

/** Everything Hookline's processes read from their environment, parsed and validated once. */
export interface HooklineConfig {
  /** Real PostgreSQL; undefined means embedded PGlite under dataDir. */
  databaseUrl: string | undefined;
  /**
   * HOOKLINE_DATABASE_TIMEOUT, with DATABASE_URL: the longest a store statement may run, and a
   * connection attempt take (at most 10 s of it), before the call fails UNAVAILABLE and the
   * connection is replaced. It bounds the wait on a PostgreSQL that stopped answering (a failover,
   * a partition), which TCP alone would leave hanging for many minutes.
   */
  databaseTimeoutMs: number;
  /** Redis for BullMQ; undefined means BullMQ's PostgreSQL backend on the store's database. */
  redis: RedisOptions | undefined;
  dataDir: string;
  api: { host: string; port: number };
  /** HOOKLINE_API_TOKENS: bare tokens act on every tenant, `tenant:<id>:<token>` on one. Empty: no auth. */
  apiTokens: { token: string; tenantId?: string }[];
  /**
   * HOOKLINE_PORTAL_KEY: the HMAC key that signs portal links (32+ characters). Undefined: each api
   * process draws a random key at start, so links stop working at a restart and work only on the
   * process that issued them; set it (the same on every api process) for scale-out.
   */
  portalKey: string | undefined;
  /** HOOKLINE_INSECURE_NO_AUTH=1: serve a non-loopback address without tokens, knowingly. */
  insecureNoAuth: boolean;
  /** Where this process serves Prometheus /metrics; undefined (the default) serves none. */
  metrics: { host: string; port: number } | undefined;
  /** HOOKLINE_METRICS_BACKLOG_EVERY: how long the metrics reuse one read of the store's backlog. */
  metricsBacklogEveryMs: number;
  /** Where a worker process answers /healthz and /readyz; undefined (the default) serves none. */
  workerHealth: { host: string; port: number } | undefined;
  queue: {
    prefix: string;
    /**
     * In-flight attempts per endpoint that sets no max_in_flight (per lane with lanes), across
     * every worker process: "adaptive" (the default) learns it from the endpoint's answers; a
     * number fixes it.
     */
    endpointConcurrency: number | "adaptive";
    /** The most an adaptive limit may reach. */
    endpointMaxConcurrency: number;
    /** 0: one queue per endpoint (the default). N > 0: endpoints hashed onto N shared queues. */
    lanes: number;
    /**
     * Queues one worker process serves at once (each holds a connection while open); undefined:
     * 64 on Redis, 8 on PostgreSQL, whose connections are dearer.
     */
    workerQueues: number | undefined;
    /** An open queue with nothing in flight for this long is closed (it reopens when work is due). */
    queueIdleMs: number;
    /** How long an idle PostgreSQL-backed worker waits before polling again. */
    pollIntervalMs: number;
    /** How often workers look for endpoints that need a consumer. */
    discoveryIntervalMs: number;
    /**
     * How long a job's lock lives without renewal: after a worker dies, its in-flight attempts are
     * retried by another worker within about 1.5 times this, and hold their endpoint's slots until then.
     */
    stalledAfterMs: number;
  };
  delivery: {
    timeoutMs: number;
    maxResponseBytes: number;
    /** Waits between attempts; attempts = waits + 1. */
    retryScheduleMs: number[];
    jitter: number;
    /** Ranges deliveries may reach although they are not public internet (all others are refused). */
    allowedCidrs: { address: string; prefix: number }[];
    /** Proxy URL every delivery goes through (it then enforces egress); undefined: direct. */
    egressProxy: string | undefined;
  };
  /** Largest data_json an Emit accepts, in bytes. */
  maxDataBytes: number;
  /** Endpoints one tenant may have; CreateEndpoint beyond it answers RESOURCE_EXHAUSTED. */
  maxEndpointsPerTenant: number;
  /** What the api's listener allows a connection before and after it authenticates. */
  connections: ConnectionLimits;
  /** WatchAttempts streams open at once, per token, per tenant and in total. */
  streams: { perToken: number; perTenant: number; total: number };
  /**
   * Health.Watch streams open at once: a pool apart from WatchAttempts', since health needs no
   * token and unauthenticated peers must not take the slots tenants' streams need.
   */
  maxHealthWatches: number;
  /** Attempts a WatchAttempts stream may fall behind before it is ended with RESOURCE_EXHAUSTED. */
  watchBufferLimit: number;
  /** How often the api re-reads new attempts even without a signal (a dropped LISTEN connection). */
  watchPollIntervalMs: number;
  sweeper: { intervalMs: number; graceMs: number };
  /**
   * TEST-ONLY fault injection (HOOKLINE_FAULT_EXIT_AFTER_COMMIT=N): the api process exits with 137
   * right after the Nth Emit commits, before the queue add, forcing the window the sweeper heals.
   * 0 (the default) is off; never set it in production.
   */
  faultExitAfterCommit: number;
  /** Auto-disable and retention, run by the workers. */
  maintenance: { intervalMs: number; disableAfterMs: number; retentionMs: number };
}

export interface ConnectionLimits {
  /** Open connections to the api port; more are closed at once. */
  maxConnections: number;
  /** Time a new connection has to send its first complete request (HTTP/1.1) or HTTP/2 settings. */
  handshakeTimeoutMs: number;
  /** Time a connection with no request or stream in progress stays open. */
  idleTimeoutMs: number;
  /** HTTP/2 streams one connection may have open at once. */
  maxConcurrentStreams: number;
  /** Largest request header block, in bytes (HTTP/1.1 and HTTP/2). */
  maxHeaderBytes: number;
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

/** Reads Hookline's configuration from an environment map; each app's entry point passes its own. */
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
  const intOrAdaptive = (text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1 || n > 1000)
      throw new Error('must be "adaptive" or a whole number from 1 to 1000');
    return n;
  };
  const positiveDuration = (text: string) => {
    const ms = duration(text);
    if (ms < 1) throw new Error("must be longer than 0");
    return ms;
  };
  // How often a loop runs: a shorter one only spins (0s held half a core doing nothing).
  const interval = (text: string) => {
    const ms = duration(text);
    if (ms < 10) throw new Error("must be at least 10ms");
    return ms;
  };

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
  const apiTokens = read("HOOKLINE_API_TOKENS", "", parseTokens);
  const portalKey = read("HOOKLINE_PORTAL_KEY", "", (text) => {
    if (text === "") return undefined;
    if (text.length < 32) throw new Error("must be at least 32 characters");
    return text;
  });
  const insecureNoAuth = read("HOOKLINE_INSECURE_NO_AUTH", "0", (text) => {
    if (text !== "0" && text !== "1") throw new Error("must be 0 or 1");
    return text === "1";
  });
  let workerHealth: { host: string; port: number } | undefined;
  const workerHealthAddr = nonEmpty(env.HOOKLINE_WORKER_HEALTH_ADDR);
  if (workerHealthAddr) {
    try {
      workerHealth = parseAddress(workerHealthAddr);
    } catch (error) {
      problems.push(`HOOKLINE_WORKER_HEALTH_ADDR ${errorText(error)}`);
    }
  }
  const prefix = read("BULLMQ_PREFIX", "bull", (text) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(text)) throw new Error("may hold only letters, digits, '.', '_' and '-'");
    return text;
  });
  const retryScheduleMs = read("HOOKLINE_RETRY_SCHEDULE", DEFAULT_RETRY_SCHEDULE, parseRetrySchedule);

  const config: HooklineConfig = {
    databaseUrl,
    databaseTimeoutMs: read("HOOKLINE_DATABASE_TIMEOUT", "30s", (text) => {
      const ms = duration(text);
      // PostgreSQL's statement_timeout and Node's timers both end near 24.8 days.
      if (ms < 100 || ms > DAY_MS) throw new Error("must be from 100ms to 1d");
      return ms;
    }),
    redis,
    dataDir: read("HOOKLINE_DATA_DIR", "./.hookline", (text) => text),
    api,
    apiTokens,
    portalKey,
    insecureNoAuth,
    workerHealth,
    metrics: read("HOOKLINE_METRICS_ADDR", "", (text) => (text === "" ? undefined : parseAddress(text))),
    metricsBacklogEveryMs: read("HOOKLINE_METRICS_BACKLOG_EVERY", "15s", (text) => {
      const ms = duration(text);
      if (ms > 3_600_000) throw new Error("must be at most 1h");
      return ms;
    }),
    queue: {
      prefix,
      endpointConcurrency: read("HOOKLINE_ENDPOINT_CONCURRENCY", "adaptive", (text) =>
        text === "adaptive" ? text : intOrAdaptive(text),
      ),
      endpointMaxConcurrency: read("HOOKLINE_ENDPOINT_MAX_CONCURRENCY", "50", int(1, 1000)),
      lanes: read("HOOKLINE_LANES", "0", int(0, 10_000)),
      queueIdleMs: read("HOOKLINE_QUEUE_IDLE", "2s", duration),
      workerQueues: read("HOOKLINE_WORKER_QUEUES", "", (text) =>
        text === "" ? undefined : int(1, 10_000)(text),
      ),
      pollIntervalMs: read("HOOKLINE_QUEUE_POLL_INTERVAL", "100ms", interval),
      discoveryIntervalMs: read("HOOKLINE_DISCOVERY_INTERVAL", "2s", interval),
      stalledAfterMs: read("HOOKLINE_STALLED_AFTER", "15s", (text) => {
        const ms = duration(text);
        if (ms < 2000) throw new Error("must be at least 2s (live workers renew their locks at half of it)");
        return ms;
      }),
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
      allowedCidrs: read("HOOKLINE_ALLOWED_CIDRS", "", parseCidrList),
      egressProxy: read("HOOKLINE_EGRESS_PROXY", "", parseProxyUrl),
    },
    maxDataBytes: read("HOOKLINE_MAX_EVENT_BYTES", "262144", int(1, 16 * 1024 * 1024)),
    maxEndpointsPerTenant: read("HOOKLINE_MAX_ENDPOINTS_PER_TENANT", "1000", int(1, 10_000_000)),
    connections: {
      maxConnections: read("HOOKLINE_MAX_CONNECTIONS", "1000", int(1, 1_000_000)),
      handshakeTimeoutMs: read("HOOKLINE_HANDSHAKE_TIMEOUT", "10s", positiveDuration),
      idleTimeoutMs: read("HOOKLINE_IDLE_TIMEOUT", "5m", positiveDuration),
      maxConcurrentStreams: read("HOOKLINE_HTTP2_MAX_STREAMS", "100", int(1, 10_000)),
      maxHeaderBytes: read("HOOKLINE_MAX_HEADER_BYTES", "16384", int(1024, 1_048_576)),
    },
    streams: {
      perToken: read("HOOKLINE_MAX_STREAMS_PER_TOKEN", "20", int(1, 100_000)),
      perTenant: read("HOOKLINE_MAX_STREAMS_PER_TENANT", "50", int(1, 100_000)),
      total: read("HOOKLINE_MAX_STREAMS", "200", int(1, 100_000)),
    },
    maxHealthWatches: read("HOOKLINE_MAX_HEALTH_WATCHES", "100", int(1, 100_000)),
    watchBufferLimit: read("HOOKLINE_WATCH_BUFFER", "10000", int(1, 1_000_000)),
    watchPollIntervalMs: read("HOOKLINE_WATCH_POLL_INTERVAL", "1s", interval),
    faultExitAfterCommit: read("HOOKLINE_FAULT_EXIT_AFTER_COMMIT", "0", int(0, 1_000_000)),
    maintenance: {
      intervalMs: read("HOOKLINE_MAINTENANCE_INTERVAL", "1m", interval),
      // 0 would disable every endpoint at its first failure, and purge everything at once.
      disableAfterMs: read("HOOKLINE_DISABLE_AFTER", "5d", positiveDuration),
      retentionMs: read("HOOKLINE_RETENTION", "30d", positiveDuration),
    },
    sweeper: {
      intervalMs: read("HOOKLINE_SWEEP_INTERVAL", "15s", interval),
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

/** "127.0.0.0/8, ::1/128" → ranges; a bare address is a range of one. */
function parseCidrList(text: string): { address: string; prefix: number }[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .map((item) => {
      const [address = "", prefixText, extra] = item.split("/");
      const family = isIP(address);
      const bits = family === 6 ? 128 : 32;
      const prefix = prefixText === undefined ? bits : Number(prefixText);
      const badPrefix = prefixText !== undefined && !/^\d{1,3}$/.test(prefixText);
      if (family === 0 || extra !== undefined || badPrefix || prefix > bits) {
        throw new Error(
          `has "${item}", which is not an IPv4 or IPv6 CIDR range such as 127.0.0.0/8 or ::1/128`,
        );
      }
      return { address, prefix };
    });
}

// The value may carry proxy credentials, so no message quotes it.
function parseProxyUrl(text: string): string | undefined {
  if (text === "") return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error("is not a URL (expected http://host:port)");
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new Error("must be an http:// or https:// proxy URL such as http://proxy.internal:3128");
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
    throw new Error("must name only the proxy's scheme, host and port (no path)");
  }
  return text;
}

function nonEmpty(text: string | undefined): string | undefined {
  return text && text.trim() !== "" ? text.trim() : undefined;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * "tok1, tenant:acme:tok2" → tokens; a token names no one, so errors name the entry by its
 * position and never echo it. A token used twice would make the first entry win silently, and one
 * holding whitespace can never be presented in a Bearer header: both are refused.
 */
function parseTokens(text: string): { token: string; tenantId?: string }[] {
  const entries = text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
  const seen = new Map<string, number>();
  return entries.map((entry, i) => {
    const parsed = parseTokenEntry(entry, i + 1);
    if (/\s/.test(parsed.token)) throw new Error(`entry ${i + 1} has whitespace in its token`);
    const first = seen.get(parsed.token);
    if (first !== undefined) throw new Error(`entry ${i + 1} repeats the token of entry ${first}`);
    seen.set(parsed.token, i + 1);
    return parsed;
  });
}

/**
 * What starts a portal link's token. The api reads a bearer token with it as a link, so an API
 * token starting with it could never be accepted: it is refused here.
 */
export const PORTAL_TOKEN_PREFIX = "hlp1.";

function parseTokenEntry(entry: string, n: number): { token: string; tenantId?: string } {
  const parsed = parseTokenParts(entry, n);
  if (parsed.token.startsWith(PORTAL_TOKEN_PREFIX))
    throw new Error(`entry ${n} has a token starting with ${PORTAL_TOKEN_PREFIX}, which marks portal links`);
  return parsed;
}

function parseTokenParts(entry: string, n: number): { token: string; tenantId?: string } {
  if (!entry.startsWith("tenant:")) {
    if (entry.length < 16) throw new Error(`entry ${n} is shorter than 16 characters`);
    return { token: entry };
  }
  const rest = entry.slice("tenant:".length);
  const split = rest.lastIndexOf(":");
  const tenantId = rest.slice(0, split);
  const token = rest.slice(split + 1);
  if (split <= 0 || token.length < 16) {
    throw new Error(`entry ${n} must be tenant:<tenant_id>:<token> with a token of 16+ characters`);
  }
  return { token, tenantId };
}
