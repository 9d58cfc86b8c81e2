import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { type DataDirLock, lockDataDir } from "./data-dir-lock.js";
import { boundedConnect, boundedPool, KEEPALIVE, timeoutAwarePool } from "./database-timeouts.js";
import { type EngineThread, startEngineThread } from "./embedded-engine-thread.js";
import { migrate, STORED_FUNCTIONS } from "./migrations.js";
import { type Database, STORE_SCHEMA } from "./schema.js";

/** Where the store lives: a real PostgreSQL URL, or embedded PGlite (on disk, or in memory when dataDir is null). */
export type StoreLocation = { databaseUrl: string } | { dataDir: string | null };

/** The handle every store call takes. Apps pass it along; the SQL stays in this package. */
export type StoreDb = Kysely<Database>;

/** An open database: the store handle, and how other clients (BullMQ) reach the same database. */
export interface StoreConnection {
  readonly db: StoreDb;
  /** pg settings that reach this same database; for embedded PGlite, its local socket. */
  readonly pgConfig: pg.ClientConfig;
  readonly embedded: boolean;
  /**
   * The stored functions this version calls, schema-qualified: on a shared PostgreSQL, those of
   * other versions may be dropped once none of their processes runs (see the README).
   */
  readonly storedFunctions: readonly string[];
  /** Embedded only: seconds the database's own thread has been busy (see EngineThread.busySeconds). */
  readonly engineBusySeconds: (() => number) | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  poolSize?: number;
  /**
   * A real PostgreSQL only: the longest a statement may run, and a connection attempt take (at
   * most 10 s of it), before the call fails with DatabaseTimeoutError. Default 30 s.
   */
  timeoutMs?: number;
  /** Called with pool errors (a dropped idle connection) and, embedded, the loss of the engine thread, instead of crashing the process. */
  onError?: (error: Error) => void;
}

/** Opens the store and runs its migrations. */
export async function connectStore(
  location: StoreLocation,
  options: ConnectOptions = {},
): Promise<StoreConnection> {
  if ("databaseUrl" in location) {
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const pgConfig = { connectionString: location.databaseUrl, ...KEEPALIVE };
    return open(pgConfig, { timeoutMs }, options, { stop: async () => {} });
  }
  const embedded = await startEmbedded(location.dataDir, (error) => options.onError?.(error));
  try {
    return await open(embedded.pgConfig, "embedded", options, embedded);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Opens the pool and migrates. Embedded PGlite is this process's own thread on a local socket,
 * with no network between to fail; its statements wait their turn on one session under load, and
 * are not timed.
 */
async function open(
  pgConfig: pg.ClientConfig,
  kind: "embedded" | { timeoutMs: number },
  options: ConnectOptions,
  server: { stop(): Promise<void>; busySeconds?: () => number },
): Promise<StoreConnection> {
  const embedded = kind === "embedded";
  // Migrations may rightly run for minutes (an index over a large table): never on the timed pool.
  if (!embedded) await migrateOnce({ ...pgConfig, ...boundedConnect(kind.timeoutMs) }, options);
  const pool = new pg.Pool({
    ...pgConfig,
    ...(embedded ? {} : boundedPool(kind.timeoutMs)),
    max: options.poolSize ?? (embedded ? 4 : 10),
  });
  pool.on("error", (error) => options.onError?.(error));
  // pg-pool listens for errors only on idle clients; one checked out (mid-transaction) when the
  // server goes away would otherwise throw an unhandled 'error' and kill the process.
  pool.on("connect", (client) => client.on("error", (error) => options.onError?.(error)));
  const root = new Kysely<Database>({
    dialect: embedded
      ? new PostgresDialect({ pool })
      : new PostgresDialect({ pool: timeoutAwarePool(pool, kind.timeoutMs) }),
  });
  if (embedded) {
    try {
      // This process holds the data directory: no other version can be calling old functions.
      await migrate(root as unknown as Kysely<unknown>, { soleVersion: true });
    } catch (error) {
      await root.destroy();
      throw error;
    }
  }
  let closed: Promise<void> | undefined;
  return {
    db: root.withSchema(STORE_SCHEMA),
    pgConfig,
    embedded,
    storedFunctions: STORED_FUNCTIONS.map((fn) => `${STORE_SCHEMA}.${fn.name}`),
    engineBusySeconds: server.busySeconds,
    close() {
      closed ??= root.destroy().then(() => server.stop());
      return closed;
    },
  };
}

/**
 * Runs the migrations on a connection of their own, closed when they are done: its connect gives
 * up (a process started while the database does not answer stops with the reason, rather than
 * waiting unseen), its statements do not.
 */
async function migrateOnce(pgConfig: pg.PoolConfig, options: ConnectOptions): Promise<void> {
  const pool = new pg.Pool({ ...pgConfig, max: 1 });
  pool.on("error", (error) => options.onError?.(error));
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(db);
  } finally {
    await db.destroy();
  }
}

// pg reaches a Unix socket as <host>/.s.PGSQL.<port>, like libpq.
const SOCKET_PORT = 5432;
// sun_path holds 108 bytes on Linux (104 on macOS), the terminating NUL included.
const MAX_SOCKET_PATH = 100;

/**
 * Starts PGlite on a thread of its own and serves it on a Unix socket, so that the store and
 * BullMQ's PostgreSQL backend both speak plain `pg` to it, each unit of work and each transaction
 * serialised, while the SQL runs on another core than the RPCs and deliveries. The socket lives
 * in a directory only this process's user can enter (`<dataDir>/run`, or a private temporary
 * directory for an in-memory store or a data directory whose path is too long for a socket):
 * the embedded store has no password, so no other local user may reach it.
 */
async function startEmbedded(dataDir: string | null, onLost: (error: Error) => void) {
  let lock: DataDirLock | undefined;
  if (dataDir !== null) {
    await mkdir(dataDir, { recursive: true });
    lock = await lockDataDir(resolve(dataDir)); // before anything in it is touched
  }
  let socket: Awaited<ReturnType<typeof privateSocketDir>> | undefined;
  let engine: EngineThread;
  try {
    socket = await privateSocketDir(dataDir);
    engine = await startEngineThread(
      {
        dataDir: dataDir === null ? null : resolve(dataDir),
        socketPath: join(socket.dir, `.s.PGSQL.${SOCKET_PORT}`),
      },
      onLost,
    );
  } catch (error) {
    await socket?.remove();
    await lock?.release();
    throw error;
  }
  const opened = socket;
  const pgConfig: pg.ClientConfig = {
    host: opened.dir,
    port: SOCKET_PORT,
    user: "postgres",
    database: "postgres",
  };
  return {
    pgConfig,
    busySeconds: () => engine.busySeconds(),
    async stop() {
      try {
        await engine.stop();
        await opened.remove();
      } finally {
        await lock?.release();
      }
    },
  };
}

/** A directory with mode 0700 for the store's socket, and how to clean it up. */
async function privateSocketDir(dataDir: string | null): Promise<{ dir: string; remove(): Promise<void> }> {
  if (dataDir !== null) {
    const dir = join(resolve(dataDir), "run");
    if (join(dir, `.s.PGSQL.${SOCKET_PORT}`).length <= MAX_SOCKET_PATH) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await chmod(dir, 0o700);
      return { dir, remove: () => rm(join(dir, `.s.PGSQL.${SOCKET_PORT}`), { force: true }) };
    }
  }
  // mkdtemp creates the directory with mode 0700.
  const dir = await mkdtemp(join(tmpdir(), "hookline-store-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
