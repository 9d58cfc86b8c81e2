import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

/** PostgreSQL channels Hookline's processes signal each other on. */
export const CHANNELS = {
  /** An endpoint appeared or was re-enabled: workers look for queues to serve. */
  endpoints: "hookline_endpoints",
  /** Attempts were recorded: api processes read the new ones for their WatchAttempts streams. */
  attempts: "hookline_attempts",
} as const;

/** Sends a notification; listeners in other processes receive it once the transaction commits. */
export async function notify(db: Kysely<Database>, channel: string, payload = ""): Promise<void> {
  await sql`select pg_notify(${channel}, ${payload})`.execute(db);
}

export interface Listener {
  close(): Promise<void>;
}

/**
 * Listens on a channel with a dedicated connection, reconnecting after it drops. Cross-process
 * signalling on a real PostgreSQL; embedded PGlite (one process) signals in process instead.
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
  const connect = async (): Promise<void> => {
    const next = new pg.Client(pgConfig);
    next.on("notification", (message) => {
      if (message.channel === channel) onMessage(message.payload ?? "");
    });
    next.on("error", (error) => {
      onError(error);
      next.end().catch(() => {});
      if (!closed) retry = setTimeout(() => connect().catch(onError), 1000);
    });
    await next.connect();
    await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    client = next;
    // A reconnect may have missed signals: say so, and let the caller re-check.
    onMessage("");
  };
  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
