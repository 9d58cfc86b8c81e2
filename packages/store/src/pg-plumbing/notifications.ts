import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Database } from "../schema.js";

/** Sends a notification; listeners in other processes receive it once the transaction commits. */
export async function notify(db: Kysely<Database>, channel: string, payload = ""): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Listens on a channel with a dedicated connection, reconnecting after it drops, for as long as it
 * takes (backing off to 5 s between tries). Cross-process signalling on a real PostgreSQL;
 * embedded PGlite (one process) signals in process instead.
 *
 * A listening connection only reads, so it would never notice a server that stopped answering
 * (a failover to another host): every heartbeatMs it asks for an answer within heartbeatMs, and
 * reconnects when none comes.
 */
export async function listen(
  pgConfig: pg.ClientConfig,
  channel: string,
  onMessage: (payload: string) => void,
  onError: (error: Error) => void = () => {},
  heartbeatMs = HEARTBEAT_MS,
): Promise<Listener> {
  let client: pg.Client | undefined;
  // The live connection's; one at a time.
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let backoffMs = RETRY_MIN_MS;

  const reconnectLater = () => {
    if (closed || retry !== undefined) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch((error: Error) => {
        onError(error);
        reconnectLater();
      });
    }, backoffMs);
    backoffMs = Math.min(backoffMs * 2, RETRY_MAX_MS);
  };

  const connect = async (): Promise<void> => {
    // Only LISTEN and the heartbeat run on it: connecting and each answer take at most heartbeatMs.
    const next = new pg.Client({
      ...pgConfig,
      connectionTimeoutMillis: heartbeatMs,
      query_timeout: heartbeatMs,
    });
    let live = false;
    const dropped = (error?: Error) => {
      if (error) onError(error);
      if (!live) return; // a failed connect rejects below; its caller decides what follows
      live = false;
      clearInterval(heartbeat);
      if (client === next) client = undefined;
      next.end().catch(() => {});
      reconnectLater();
    };
    next.on("error", dropped);
    next.on("end", () => dropped());
    next.on("notification", (message) => {
      if (message.channel === channel) onMessage(message.payload ?? "");
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      next.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    live = true;
    client = next;
    heartbeat = setInterval(() => {
      next.query("select 1").catch((error: Error) => {
        if (live) dropped(new Error(`no answer to a heartbeat: ${error.message}`));
      });
    }, heartbeatMs);
    heartbeat.unref();
    backoffMs = RETRY_MIN_MS;
    // A reconnect may have missed signals: say so, and let the caller re-check.
    onMessage("");
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const last = client;
      client = undefined;
      // A graceful end waits for the server, which may be the one that stopped answering.
      let gaveUp: NodeJS.Timeout | undefined;
      await Promise.race([
        last?.end().catch(() => {}),
        new Promise((resolve) => {
          gaveUp = setTimeout(resolve, heartbeatMs);
        }),
      ]);
      clearTimeout(gaveUp);
    },
  };
}

const HEARTBEAT_MS = 10_000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;
