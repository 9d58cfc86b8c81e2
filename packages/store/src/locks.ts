import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

/** Advisory lock keys, one per singleton job, so that only one process runs it at a time. */
export const LOCK_KEYS = { sweeper: 0x686b_0001 } as const;

/**
 * Runs fn inside a transaction holding a transaction-scoped advisory lock, or returns undefined
 * at once when another process holds it.
 */
export async function withTryLock<T>(
  db: Kysely<Database>,
  key: number,
  fn: (tx: Kysely<Database>) => Promise<T>,
): Promise<T | undefined> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{
      locked: boolean;
    }>`select pg_try_advisory_xact_lock(${key}) as locked`.execute(tx);
    if (!rows[0]?.locked) return undefined;
    return fn(tx);
  });
}
