import { type Kysely, sql } from "kysely";
import { reopening, toReopened } from "./deliveries.js";
import type { OverdueDelivery } from "./due-deliveries.js";
import type { Database } from "./schema.js";

/**
 * How many deliveries one statement of a change to an endpoint's whole backlog touches. In one
 * statement, a backlog of a million took 12–18 s (every row rewritten, every index updated), so
 * under HOOKLINE_DATABASE_TIMEOUT a large enough one failed on every try; and a recovery held all
 * its rows in memory, then its jobs held every other caller's Emit behind them on the way to the
 * queue. Pages keep each statement short whatever the backlog, and let other calls through between.
 */
export const BACKLOG_PAGE = 1000;

/** An endpoint's failed deliveries created since a time: what RecoverEndpoint reopens. */
export interface FailedSince {
  tenantId: string;
  endpointId: string;
  since: Date;
}

/** One page of a recovery; `after` is where the next page starts, undefined once none is left. */
export interface ReopenedPage {
  reopened: OverdueDelivery[];
  after: string | undefined;
}

/**
 * Reopens the next page of the endpoint's failed deliveries in seq order (after `after`, from the
 * start when undefined) for one manual attempt each. Only deliveries of the endpoint row that
 * exists now, and only while it is enabled: not a deleted endpoint's, not those of a deleted one
 * whose id a new endpoint took. A delivery that stopped being failed since the page was read (a
 * RetryDelivery meanwhile) is left as it is.
 */
export async function reopenFailedPage(
  db: Kysely<Database>,
  target: FailedSince,
  after: string | undefined,
  now: Date,
  pageSize = BACKLOG_PAGE,
): Promise<ReopenedPage> {
  let page = db
    .selectFrom("deliveries")
    .select(["id", "seq"])
    .where("tenant_id", "=", target.tenantId)
    .where("endpoint_id", "=", target.endpointId)
    .where("status", "=", "failed")
    .where("created_at", ">=", target.since);
  if (after !== undefined) page = page.where("seq", ">", after);
  // (tenant_id, endpoint_id, seq) is an index: each page starts where the last one ended.
  const rows = await page.orderBy("seq").limit(pageSize).execute();
  if (rows.length === 0) return { reopened: [], after: undefined };
  const reopened = await reopening(db, now)
    .where("d.id", "=", sql<string>`any(${sql.val(rows.map((row) => row.id))}::text[])`)
    .where("d.status", "=", "failed")
    .execute();
  return {
    reopened: reopened.map(toReopened),
    after: rows.length < pageSize ? undefined : rows[rows.length - 1]?.seq,
  };
}

/**
 * Cancels the pending deliveries made for the endpoint row `seq` (deliveries made before
 * endpoint_seq was recorded match by id alone), a page per statement, and returns how many. Run
 * inside the transaction that deletes the row, so the two are one change: no statement grows with
 * the backlog, and no new endpoint can take the id while the old one's deliveries are pending.
 */
export async function cancelPendingOf(
  tx: Kysely<Database>,
  endpoint: { tenantId: string; endpointId: string; seq: string },
  now: Date,
  pageSize = BACKLOG_PAGE,
): Promise<number> {
  let cancelled = 0;
  for (;;) {
    // The first pending ones left. In one transaction the index entries of rows already cancelled
    // are read again on each page; measured on PostgreSQL 15 the walk still stays linear (a
    // million in 11 s, what one statement took).
    const page = await tx
      .selectFrom("deliveries")
      .select("id")
      .where("tenant_id", "=", endpoint.tenantId)
      .where("endpoint_id", "=", endpoint.endpointId)
      .where("status", "=", "pending")
      .where((eb) => eb.or([eb("endpoint_seq", "=", endpoint.seq), eb("endpoint_seq", "is", null)]))
      .limit(pageSize)
      .execute();
    if (page.length === 0) return cancelled;
    const result = await tx
      .updateTable("deliveries")
      .set({ status: "cancelled", next_attempt_at: null, next_attempt_manual: false, updated_at: now })
      .where("id", "=", sql<string>`any(${sql.val(page.map((row) => row.id))}::text[])`)
      // Read committed re-checks this on a row changed meanwhile: one just delivered stays so.
      .where("status", "=", "pending")
      .executeTakeFirst();
    cancelled += Number(result.numUpdatedRows);
    if (page.length < pageSize) return cancelled;
  }
}
