import { type Kysely, sql } from "kysely";
import type { Database } from "../schema.js";

/** Advisory lock keys, one per singleton job, so that only one process runs it at a time. */
export const LOCK_KEYS = {
  sweeper: 0x686b_0001,
  attemptOrder: 0x686b_0002,
  maintenance: 0x686b_0003,
  /** With the tenant id's hash as second key: serialises endpoint creation per tenant (the quota). */
  endpointQuota: 0x686b_0004,
  /** Serialises creating the store's functions (see ensureStoredFunctions). */
  storedFunctions: 0x686b_0005,
} as const;

/**
 * Runs fn while holding a session advisory lock on one pooled connection, or returns undefined at
 * once when another process holds it. No transaction stays open meanwhile: fn may wait on other
 * systems (the queue), and on embedded PGlite an open transaction would stall every connection.
 */
export async function withTryLock<T>(
  db: Kysely<Database>,
  key: number,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(
      conn,
    );
    if (!rows[0]?.locked) return undefined;
    try {
      return await fn();
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn);
    }
  });
}
