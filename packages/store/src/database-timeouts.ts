import type { PostgresPool, PostgresPoolClient } from "kysely";
import type pg from "pg";

/**
 * A PostgreSQL that stops answering without closing its connections (a failover to another host,
 * a network partition) leaves pg waiting for ever: a statement already sent waits for TCP to give
 * up (about 15 minutes on Linux), an idle connection never notices, and the server keeps a dead
 * client's session, its open transaction and its advisory locks (the sweeper's) for two hours.
 * These settings bound each of those waits.
 */

/** The longest a new connection may take, whatever the statement timeout: a connect is one round trip or two. */
const MAX_CONNECT_MS = 10_000;
/**
 * How much longer the client waits for an answer than the server lets a statement run: a server
 * that is there cancels the statement itself (a clean error on a connection that stays usable);
 * only a server that is not answering runs into the client's timeout.
 */
const READ_GRACE_MS = 1000;
/** The server's probes of an idle client connection: a dead client's session ends after about 25 s. */
const SERVER_KEEPALIVE = { idleS: 10, intervalS: 5, count: 3 };

/** A store call gave up waiting for PostgreSQL: no answer, or no connection, in time. */
export class DatabaseTimeoutError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = "DatabaseTimeoutError";
  }
}

/** For every connection to a real PostgreSQL (the store's, its listeners', BullMQ's): TCP keepalive. */
export const KEEPALIVE: pg.ClientConfig = {
  keepAlive: true,
  keepAliveInitialDelayMillis: SERVER_KEEPALIVE.idleS * 1000,
};

/**
 * What the store's own pool adds: a bounded connect, and pg's read timeout a little past the
 * server's statement timeout. Only there: pg-pool's connect timeout also bounds the wait for a
 * free connection, which BullMQ's two-connection pools may rightly spend under load.
 */
export function boundedPool(timeoutMs: number): pg.PoolConfig {
  return { ...boundedConnect(timeoutMs), query_timeout: timeoutMs + READ_GRACE_MS };
}

/** A connect that gives up: for the migrations' connection too, whose statements are not timed. */
export function boundedConnect(timeoutMs: number): pg.PoolConfig {
  return { connectionTimeoutMillis: Math.min(timeoutMs, MAX_CONNECT_MS) };
}

/**
 * Run on each new store connection: the server ends a statement, or a transaction left idle (its
 * client gone mid-way), after timeoutMs, and probes idle clients so that a dead one's session and
 * locks go within seconds. SET rather than startup options, which connection poolers refuse.
 */
function sessionSettings(timeoutMs: number): string {
  const ms = Math.round(timeoutMs);
  return (
    `set statement_timeout = ${ms}; set idle_in_transaction_session_timeout = ${ms}; ` +
    `set tcp_keepalives_idle = ${SERVER_KEEPALIVE.idleS}; ` +
    `set tcp_keepalives_interval = ${SERVER_KEEPALIVE.intervalS}; ` +
    `set tcp_keepalives_count = ${SERVER_KEEPALIVE.count}`
  );
}

/**
 * The store's pool as Kysely sees it, with pg's timeouts turned into DatabaseTimeoutError. A
 * connection whose statement timed out still has that statement outstanding (pg cannot take it
 * back), so it fails every later statement at once and leaves the pool when released; the next
 * caller gets a fresh connection instead of queueing behind the lost answer.
 */
export function timeoutAwarePool(pool: pg.Pool, timeoutMs: number): PostgresPool {
  const connectMs = Math.min(timeoutMs, MAX_CONNECT_MS);
  const readMs = timeoutMs + READ_GRACE_MS;
  const settled = new WeakSet<pg.PoolClient>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        if (isConnectTimeout(error)) {
          throw new DatabaseTimeoutError(
            `no database connection opened, or free in the pool, within ${connectMs} ms`,
            { cause: error },
          );
        }
        throw error;
      }
      let lost: DatabaseTimeoutError | undefined;
      const query = async (text: string, parameters: readonly unknown[]) => {
        if (lost) throw lost;
        try {
          // Kysely hands over a fresh array already: no second copy on every statement.
          return await client.query(text, parameters as unknown[]);
        } catch (error) {
          if (!isReadTimeout(error)) throw error;
          lost = new DatabaseTimeoutError(`the database did not answer within ${readMs} ms`, {
            cause: error,
          });
          throw lost;
        }
      };
      if (!settled.has(client)) {
        // Here rather than in Kysely's onCreateConnection, which keeps the client checked out for
        // ever when its statement fails.
        try {
          await query(sessionSettings(timeoutMs), []);
        } catch (error) {
          client.release(true);
          throw error;
        }
        settled.add(client);
      }
      return {
        // Kysely calls the cursor overload only for streamed queries, with a cursor configured: none here.
        query: query as unknown as PostgresPoolClient["query"],
        release(destroy?: boolean) {
          client.release(destroy === true || lost !== undefined);
        },
      };
    },
    end: () => pool.end(),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : "";
}

/** pg's read timeout (query_timeout). */
function isReadTimeout(error: unknown): boolean {
  return messageOf(error) === "Query read timeout";
}

/** pg-pool's wait for a connection, or pg's connect, ran past connectionTimeoutMillis. */
function isConnectTimeout(error: unknown): boolean {
  return /timeout exceeded when trying to connect|connection timeout/.test(messageOf(error));
}
