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
 */
export async function listen(
  pgConfig: pg.ClientConfig,
  channel: string,
  onMessage: (payload: string) => void,
  onError: (error: Error) => void = () => {},
): Promise<Listener> {
  let client: pg.Client | undefined;
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
    const next = new pg.Client(pgConfig);
    let live = false;
    const dropped = (error?: Error) => {
      if (error) onError(error);
      if (!live) return; // a failed connect rejects below; its caller decides what follows
      live = false;
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
    backoffMs = RETRY_MIN_MS;
    // A reconnect may have missed signals: say so, and let the caller re-check.
    onMessage("");
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const last = client;
      client = undefined;
      await last?.end().catch(() => {});
    },
  };
}

const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5000;
