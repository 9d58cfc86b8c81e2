import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";

// What is due: the sweeper's walk through overdue deliveries, and the workers' look for the
// endpoints that have work.

/** A pending delivery whose next attempt is overdue: the sweeper checks that a job exists for it. */
export interface OverdueDelivery {
  id: string;
  tenantId: string;
  endpointId: string;
  attemptCount: number;
  /** Its due attempt was asked for by hand. */
  manual: boolean;
}

/** A place in the walk through overdue deliveries, which goes in (due time, id) order. */
export interface OverduePosition {
  dueAt: Date;
  id: string;
}

/**
 * Up to limit pending deliveries due before dueBefore, in (due time, id) order, after a position
 * (from the start without one): a caller walks them page by page, so that a long backlog of
 * overdue deliveries cannot keep it from ever reading the ones behind.
 */
export async function findOverdueDeliveries(
  db: Kysely<Database>,
  dueBefore: Date,
  limit: number,
  after?: OverduePosition,
): Promise<(OverdueDelivery & OverduePosition)[]> {
  let query = db
    .selectFrom("deliveries")
    .select(["id", "tenant_id", "endpoint_id", "attempt_count", "next_attempt_manual", "next_attempt_at"])
    .where("status", "=", "pending")
    .where("next_attempt_at", "<", dueBefore);
  if (after) {
    // Due times are written from JS Dates, whole milliseconds, so a position read back is exact.
    // The plain bound keeps the pending-due index usable; the pair picks up where the page ended.
    query = query
      .where("next_attempt_at", ">=", after.dueAt)
      .where((eb) =>
        eb.or([
          eb("next_attempt_at", ">", after.dueAt),
          eb.and([eb("next_attempt_at", "=", after.dueAt), eb("id", ">", after.id)]),
        ]),
      );
  }
  const rows = await query.orderBy("next_attempt_at").orderBy("id").limit(limit).execute();
  return rows.map((row) => ({
    id: row.id,
    tenantId: row.tenant_id,
    endpointId: row.endpoint_id,
    attemptCount: row.attempt_count,
    manual: row.next_attempt_manual,
    // Pending deliveries always have a due time; the column is nullable for final ones.
    dueAt: row.next_attempt_at ?? dueBefore,
  }));
}

/** An endpoint with pending deliveries: when the earliest is due, and the limits its queue enforces. */
export interface EndpointWork {
  tenantId: string;
  endpointId: string;
  dueAt: Date;
  /** Null: the service default. */
  maxInFlight: number | null;
  /** Null: no limit. */
  rateLimitPerSecond: number | null;
  /** Where it is delivered; null when the endpoint was deleted meanwhile. */
  url: string | null;
}

/**
 * The endpoints with a pending delivery due before dueBefore. A loose index scan: one index probe
 * per endpoint with pending deliveries, so a backlog of thousands on one endpoint costs one probe.
 * Also returns the earliest due time after dueBefore, if any, so the caller knows when to look again.
 */
export async function findEndpointsWithWork(
  db: Kysely<Database>,
  dueBefore: Date,
): Promise<{ due: EndpointWork[]; nextDueAt: Date | null }> {
  const { rows } = await sql<{
    tenant_id: string;
    endpoint_id: string;
    due_at: Date;
    max_in_flight: number | null;
    rate_limit_per_second: number | null;
    url: string | null;
  }>`
    with recursive pending as (
      (select tenant_id, endpoint_id from hookline.deliveries
        where status = 'pending' order by tenant_id, endpoint_id limit 1)
      union all
      select next.tenant_id, next.endpoint_id from pending, lateral (
        select d.tenant_id, d.endpoint_id from hookline.deliveries d
         where d.status = 'pending' and (d.tenant_id, d.endpoint_id) > (pending.tenant_id, pending.endpoint_id)
         order by d.tenant_id, d.endpoint_id limit 1) next
    ), due as (
      select p.tenant_id, p.endpoint_id,
             (select min(d.next_attempt_at) from hookline.deliveries d
               where d.status = 'pending' and d.tenant_id = p.tenant_id and d.endpoint_id = p.endpoint_id) as due_at
        from pending p
    )
    select due.tenant_id, due.endpoint_id, due.due_at, ep.max_in_flight, ep.rate_limit_per_second, ep.url
      from due left join hookline.endpoints ep on ep.tenant_id = due.tenant_id and ep.id = due.endpoint_id
     where due.due_at < ${dueBefore}::timestamptz
     order by due.due_at`.execute(db);
  const next = await db
    .selectFrom("deliveries")
    .select((eb) => eb.fn.min("next_attempt_at").as("next"))
    .where("status", "=", "pending")
    .where("next_attempt_at", ">=", dueBefore)
    .executeTakeFirst();
  return {
    due: rows.map((row) => ({
      tenantId: row.tenant_id,
      endpointId: row.endpoint_id,
      dueAt: new Date(row.due_at),
      maxInFlight: row.max_in_flight,
      rateLimitPerSecond: row.rate_limit_per_second,
      url: row.url,
    })),
    nextDueAt: next?.next ? new Date(next.next) : null,
  };
}
