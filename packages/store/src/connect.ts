import { mkdir } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrate } from "./migrations.js";
import { PGliteServer } from "./pglite-server.js";
import { type Database, STORE_SCHEMA } from "./schema.js";

/** Where the store lives: a real PostgreSQL URL, or embedded PGlite (on disk, or in memory when dataDir is null). */
export type StoreLocation = { databaseUrl: string } | { dataDir: string | null };

/** An open database: the kysely handle, and how other clients (BullMQ) reach the same database. */
export interface StoreConnection {
  readonly db: Kysely<Database>;
  /** pg settings that reach this same database; for embedded PGlite, its local socket. */
  readonly pgConfig: pg.ClientConfig;
  readonly embedded: boolean;
  close(): Promise<void>;
}

export interface ConnectOptions {
  poolSize?: number;
  /** Called with pool errors (a dropped idle connection) instead of crashing the process. */
  onError?: (error: Error) => void;
}

/** Opens the store and runs its migrations. */
export async function connectStore(
  location: StoreLocation,
  options: ConnectOptions = {},
): Promise<StoreConnection> {
  if ("databaseUrl" in location) {
    return open({ connectionString: location.databaseUrl }, false, options, async () => {});
  }
  const embedded = await startEmbedded(location.dataDir);
  try {
    return await open(embedded.pgConfig, true, options, embedded.stop);
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

async function open(
  pgConfig: pg.ClientConfig,
  embedded: boolean,
  options: ConnectOptions,
  stopServer: () => Promise<void>,
): Promise<StoreConnection> {
  const pool = new pg.Pool({ ...pgConfig, max: options.poolSize ?? (embedded ? 4 : 10) });
  pool.on("error", (error) => options.onError?.(error));
  // pg-pool listens for errors only on idle clients; one checked out (mid-transaction) when the
  // server goes away would otherwise throw an unhandled 'error' and kill the process.
  pool.on("connect", (client) => client.on("error", (error) => options.onError?.(error)));
  const root = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrate(root as unknown as Kysely<unknown>);
  } catch (error) {
    await root.destroy();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    db: root.withSchema(STORE_SCHEMA),
    pgConfig,
    embedded,
    close() {
      closed ??= root.destroy().then(stopServer);
      return closed;
    },
  };
}

/**
 * Starts PGlite and serves it on a loopback port, so that the store and BullMQ's PostgreSQL
 * backend both speak plain `pg` to it, each unit of work and each transaction serialised.
 */
async function startEmbedded(dataDir: string | null) {
  if (dataDir !== null) await mkdir(dataDir, { recursive: true });
  const pglite = dataDir === null ? await PGlite.create() : await PGlite.create({ dataDir });
  // The socket ignores startup options, so BullMQ's search_path is set once for the shared session.
  await pglite.exec("SET search_path TO bullmq, public");
  const server = new PGliteServer(pglite);
  const port = await server.listen("127.0.0.1");
  const pgConfig: pg.ClientConfig = { host: "127.0.0.1", port, user: "postgres", database: "postgres" };
  return {
    pgConfig,
    async stop() {
      await server.close();
      await pglite.close();
    },
  };
}
