import type { Kysely } from "kysely";
import { cancelDeliveries, cancellation, reopening, toReopened } from "./deliveries.js";
import type { OverdueDelivery } from "./due-deliveries.js";
import { byIds, withDeliveriesLocked } from "./lock-order.js";
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
  const reopened = await reopening(db, now, (query) =>
    byIds(rows.map((row) => row.id))(query).where("status", "=", "failed"),
  )
    .where("d.status", "=", "failed")
    .execute();
  return {
    reopened: reopened.map(toReopened),
    after: rows.length < pageSize ? undefined : rows[rows.length - 1]?.seq,
  };
}

/** An endpoint row that was deleted: its id may be taken again, its seq never. */
export interface DeletedEndpoint {
  tenantId: string;
  endpointId: string;
  seq: string;
  /** Pending deliveries cancelled with the row (cancelUnboundPendingOf), before any page. */
  cancelledWithRow: number;
}

/**
 * Cancels the pending deliveries made for a deleted endpoint row, a page per statement, each
 * committed, and returns how many. Pages go forward by due time: PostgreSQL often reads them
 * through the index of every tenant's pending deliveries by due time, and without the lower bound
 * each page walked again past every other backlog due earlier (a million took 67 s beside another
 * tenant's 500,000; with it, 17 s, and 30–33 s through the api with due times spread over an
 * hour, the updates' share). Committed pages, too: in one transaction each page walked again past
 * the entries of rows it had already cancelled, which only a commit lets go. Stops between pages
 * once `stop` is aborted, and then returns `complete: false`.
 */
export async function cancelPendingOf(
  db: Kysely<Database>,
  endpoint: DeletedEndpoint,
  now: Date,
  {
    stop,
    pageSize = BACKLOG_PAGE,
    onPage,
  }: {
    stop?: AbortSignal;
    pageSize?: number;
    /** Told each page's count as it commits: a later page failing does not undo it. */
    onPage?: (cancelled: number) => void;
  } = {},
): Promise<{ cancelled: number; complete: boolean }> {
  let cancelled = 0;
  let from: Date | null = null;
  for (;;) {
    if (stop?.aborted) return { cancelled, complete: false };
    let query = db
      .selectFrom("deliveries")
      .select(["id", "next_attempt_at"])
      .where("tenant_id", "=", endpoint.tenantId)
      .where("endpoint_id", "=", endpoint.endpointId)
      .where("status", "=", "pending")
      .where("endpoint_seq", "=", endpoint.seq);
    // A pending delivery always has a due time (the sweeper finds lost ones by it).
    if (from !== null) query = query.where("next_attempt_at", ">=", from);
    const page = await query.orderBy("next_attempt_at").limit(pageSize).execute();
    if (page.length === 0) return { cancelled, complete: true };
    // Only those still pending: read committed re-checks a row changed meanwhile, so one just
    // delivered stays delivered.
    const ids = page.map((row) => row.id);
    const done = (await cancelDeliveries(db, ids, now)).length;
    cancelled += done;
    if (done > 0) onPage?.(done);
    const last = page[page.length - 1]?.next_attempt_at ?? null;
    if (page.length < pageSize || last === null) return { cancelled, complete: true };
    from = last;
  }
}

/**
 * In the transaction that deletes the endpoint row: cancels its pending deliveries made before
 * deliveries recorded their endpoint's seq, which match any endpoint with the id. Left for the
 * pages after the commit, a new endpoint taking the id meanwhile would be sent them. Returns how
 * many.
 */
export async function cancelUnboundPendingOf(
  tx: Kysely<Database>,
  tenantId: string,
  endpointId: string,
  now: Date,
): Promise<number> {
  const result = await withDeliveriesLocked(tx, (query) =>
    query
      .where("tenant_id", "=", tenantId)
      .where("endpoint_id", "=", endpointId)
      .where("status", "=", "pending")
      .where("endpoint_seq", "is", null),
  )
    .updateTable("deliveries as d")
    .from("locked")
    .whereRef("d.id", "=", "locked.id")
    .set(cancellation(now))
    .where("d.status", "=", "pending")
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
