import { type Kysely, type SelectQueryBuilder, sql } from "kysely";
import type { Database } from "./schema.js";

/** Which deliveries to lock: a filter on the deliveries table. */
export type DeliveriesToLock = (
  query: SelectQueryBuilder<Database, "deliveries", { id: string }>,
) => SelectQueryBuilder<Database, "deliveries", { id: string }>;

/** The deliveries with these ids. */
export const byIds =
  (ids: readonly string[]): DeliveriesToLock =>
  (query) =>
    query.where("id", "=", sql<string>`any(${sql.val([...ids])}::text[])`);

/**
 * A statement that locks several deliveries locks them in id order: the attempt record's read
 * probes the batch's sorted ids, the statements built on this one lock their rows in a CTE
 * first, sorted, then change them, and the purge's deletes do the same (it locks for a delete,
 * which this one does not). Two statements that lock the same rows in different orders can
 * each hold a row the other waits for: a review reproduced that deadlock between recording a batch
 * of attempts (probes, id order) and a deleted endpoint's cancel pages (a scan, the table's order).
 * The CTE is materialised so that it runs once, whatever the join that reads it.
 */
export function withDeliveriesLocked(db: Kysely<Database>, which: DeliveriesToLock) {
  return db.with(
    (cte) => cte("locked").materialized(),
    (qb) => which(qb.selectFrom("deliveries").select("id")).orderBy("id").forNoKeyUpdate(),
  );
}

/**
 * The order a statement that locks several endpoint rows takes them in: recording attempts (their
 * endpoints' runs of failures) and auto-disable both do, and in their plans' orders two of them
 * could each hold an endpoint the other waits for. For a statement that names the endpoints
 * table `ep`.
 */
export const ENDPOINTS_IN_KEY_ORDER = sql`ep.tenant_id, ep.id`;
