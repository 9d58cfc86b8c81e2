import type { RedisOptions } from "@hookline/config";
import { type PostgresConnectionOptions, runMigrations } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";

/** Where BullMQ keeps its queues: Redis, or its PostgreSQL backend on the store's database. */
export type QueueBackendOptions =
  | { kind: "redis"; redis: RedisOptions; prefix: string }
  | {
      kind: "postgres";
      pg: pg.ClientConfig;
      embedded: boolean;
      pollIntervalMs: number;
    };

interface BackendCommon {
  /**
   * Counts the shared connection's (re)connections. A Redis without persistence may come back
   * empty, without the per-queue settings; producers re-apply them when this changes.
   */
  connectionGeneration(): number;
  /** Called after the shared connection (re)connects: settings kept in the queues may be gone. */
  onReconnect(listener: () => void): void;
  /** Whether the backend answers now (a Redis that is reconnecting does not). */
  ping(): Promise<boolean>;
  /**
   * How long the connection has been lost and not yet made again (Redis down, or unreachable), in
   * ms; 0 while connected (and while first opening). BullMQ's connection holds every command
   * until it is back.
   */
  lostForMs(): number;
  /**
   * When the connection was last lost (ms since the epoch, this process's clock), kept once it is
   * made again; undefined if it never was. The PostgreSQL backend's jobs outlive a lost connection.
   */
  lastLostAt(): number | undefined;
  close(): Promise<void>;
}

/** Queues on Redis: every Queue and Worker shares one ioredis client (BullMQ adds blocking ones). */
export interface RedisBackend extends BackendCommon {
  readonly kind: "redis";
  readonly connection: Redis;
  readonly prefix: string;
}

/** Queues on BullMQ's PostgreSQL backend, in schema `bullmq` of the store's database. */
export interface PostgresBackend extends BackendCommon {
  readonly kind: "postgres";
  /** Producers' Queues share this small pool. */
  readonly pool: pg.Pool;
  /**
   * The pool multi-queue adds go through, kept apart so that the errors of its queries are
   * theirs: bullmq 6.7's FlowProducer.addBulk returns as if it succeeded when its statement
   * failed (taskforcesh/bullmq#3851), so the producer reads the errors here instead.
   */
  readonly flowPool: pg.Pool;
  /** The errors flowPool's queries raised since the last call. */
  takeFlowErrors(): Error[];
  /** Each Worker gets its own pool and LISTEN client from this configuration. */
  readonly workerConnection: PostgresConnectionOptions;
  /** How long an idle Worker waits between polls: on embedded PGlite, a safety net under NOTIFY. */
  readonly drainDelaySeconds: number;
}

/** The pieces every Queue and Worker of one process needs, built once and shared. */
export type QueueBackend = RedisBackend | PostgresBackend;

const PG_SCHEMA = "bullmq";

export async function openQueueBackend(options: QueueBackendOptions): Promise<QueueBackend> {
  if (options.kind === "redis") {
    const redisOptions = {
      ...options.redis,
      // BullMQ's workers require this: a blocked command must wait for reconnection, not fail.
      maxRetriesPerRequest: null,
    };
    await probeRedis(options.redis);
    const shared = new Redis(redisOptions);
    shared.on("error", () => {}); // reconnects by itself; callers see failures on their commands
    let generation = 0;
    const reconnectListeners: (() => void)[] = [];
    let lostAt: number | undefined;
    let lastLostAt: number | undefined;
    shared.on("close", () => {
      lostAt ??= Date.now();
      lastLostAt = Date.now();
    });
    shared.on("ready", () => {
      lostAt = undefined;
      generation += 1;
      if (generation > 1) for (const listener of reconnectListeners) listener();
    });
    return {
      kind: "redis",
      connection: shared,
      prefix: options.prefix,
      connectionGeneration: () => generation,
      onReconnect: (listener) => reconnectListeners.push(listener),
      // A client that is not "ready" would queue the PING until it reconnects.
      ping: async () => shared.status === "ready" && (await shared.ping()) === "PONG",
      // At least 1 once lost, even within the same millisecond: 0 means connected.
      lostForMs: () => (lostAt === undefined ? 0 : Math.max(1, Date.now() - lostAt)),
      lastLostAt: () => lastLostAt,
      close: async () => {
        shared.disconnect();
      },
    };
  }
  const pgConfig = options.pg;
  const migrator = new pg.Client(pgConfig);
  await migrator.connect();
  try {
    await runMigrations(migrator, PG_SCHEMA);
  } finally {
    await migrator.end();
  }
  // Producers share one small pool. Each open Worker gets its own two-connection pool and LISTEN
  // client from BullMQ (tried: Workers sharing one pool stalled once more queues had turned over
  // than the pool had connections).
  const sharedPool = sharedPgPool(pgConfig, 4);
  const flowPool = sharedPgPool(pgConfig, 2);
  let flowErrors: Error[] = [];
  const query = flowPool.query.bind(flowPool) as (...args: unknown[]) => unknown;
  flowPool.query = ((...args: unknown[]) => {
    const result = query(...args);
    if (result instanceof Promise)
      result.catch((error: unknown) =>
        flowErrors.push(error instanceof Error ? error : new Error(String(error))),
      );
    return result;
  }) as typeof flowPool.query;
  const workerConfig: PostgresConnectionOptions = { ...(pgConfig as object), schema: PG_SCHEMA, max: 2 };
  return {
    kind: "postgres",
    pool: sharedPool,
    flowPool,
    takeFlowErrors: () => {
      const taken = flowErrors;
      flowErrors = [];
      return taken;
    },
    workerConnection: workerConfig,
    // NOTIFY wakes a worker on real PostgreSQL, and on embedded PGlite through the socket server,
    // which passes notifications on between its connections; the short poll there is a safety net.
    drainDelaySeconds: options.embedded ? options.pollIntervalMs / 1000 : 5,
    // PostgreSQL keeps the queues' settings across restarts.
    connectionGeneration: () => 0,
    onReconnect: () => {},
    // pg fails a query at once when it cannot connect: nothing waits for the database to return.
    lostForMs: () => 0,
    lastLostAt: () => undefined,
    ping: async () => {
      await sharedPool.query("select 1");
      return true;
    },
    close: async () => {
      await Promise.all([sharedPool.end(), flowPool.end()]);
    },
  };
}

/** A pool BullMQ's PostgreSQL backend can use as is: its schema first on the search path. */
function sharedPgPool(config: pg.ClientConfig, max: number): pg.Pool {
  // Idle connections close, so a quiet process holds few.
  const pool = new pg.Pool({
    ...config,
    max,
    idleTimeoutMillis: 5000,
    options: `-c search_path=${PG_SCHEMA}`,
  });
  // Errors surface on the calls that use the pool; a client dropped while checked out must not
  // throw an unhandled 'error' (pg-pool only listens on idle ones).
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  // Every open Queue or Worker (up to the producer's 1,000 handles) listens on its pool.
  pool.setMaxListeners(2100);
  return pool;
}

/** Connects once without retrying, so a wrong address, password or TLS setting fails at start with its reason. */
async function probeRedis(redis: RedisOptions): Promise<void> {
  const probe = new Redis({
    ...redis,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 5000,
  });
  let lastError: Error | undefined;
  probe.on("error", (error: Error) => {
    lastError = error;
  });
  try {
    await probe.connect();
    await probe.ping();
  } catch (error) {
    // ioredis reports a refused AUTH as "Connection is closed"; the error event had the reason.
    const reason = lastError?.message ?? (error instanceof Error ? error.message : String(error));
    throw new Error(
      `cannot use Redis at ${redis.host}:${redis.port} (db ${redis.db}${redis.tls ? ", TLS" : ""}): ${reason}`,
    );
  } finally {
    probe.disconnect();
  }
}
