import type { Kysely } from "kysely";
import { LOCK_KEYS, withTryLock } from "./pg-plumbing/locks.js";
import type { Database } from "./schema.js";

/** Jobs that one process at a time runs, among all the processes sharing a store. */
export type ExclusiveJob = "sweeper" | "maintenance";

/** Runs fn unless another process is running the same job, in which case it resolves undefined. */
export function runExclusively<T>(
  db: Kysely<Database>,
  job: ExclusiveJob,
  fn: () => Promise<T>,
): Promise<T | undefined> {
  return withTryLock(db, LOCK_KEYS[job], fn);
}
