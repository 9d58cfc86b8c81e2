import { type Kysely, type Selectable, sql } from "kysely";
import type { OverdueDelivery } from "./due-deliveries.js";
import { NotFoundError } from "./errors.js";
import { byIds, type DeliveriesToLock, withDeliveriesLocked } from "./lock-order.js";
import { decodePageToken, pageOf, pageScope } from "./page-token.js";
import type { Database, DeliveryStatusValue, DeliveryTable, EndpointStatusValue } from "./schema.js";

export interface DeliveryRecord {
  id: string;
  tenantId: string;
  eventId: string;
  endpointId: string;
  status: DeliveryStatusValue;
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

export interface DeliveryFilter {
  tenantId?: string;
  eventId?: string;
  endpointId?: string;
  status?: DeliveryStatusValue;
  /** Only deliveries of events of this type. */
  eventType?: string;
  /** Created at or after this time. */
  createdFrom?: Date;
  /** Created before this time. */
  createdUntil?: Date;
}

export async function listDeliveries(
  db: Kysely<Database>,
  filter: DeliveryFilter,
  pageSize: number,
  pageToken: string,
): Promise<{ items: DeliveryRecord[]; nextPageToken: string }> {
  const scope = pageScope("deliveries", { ...filter });
  const after = decodePageToken(pageToken, scope);
  let query = db.selectFrom("deliveries").selectAll();
  if (filter.tenantId) query = query.where("tenant_id", "=", filter.tenantId);
  if (filter.eventId) query = query.where("event_id", "=", filter.eventId);
  if (filter.endpointId) query = query.where("endpoint_id", "=", filter.endpointId);
  if (filter.status) query = query.where("status", "=", filter.status);
  if (filter.createdFrom) query = query.where("created_at", ">=", filter.createdFrom);
  if (filter.createdUntil) query = query.where("created_at", "<", filter.createdUntil);
  const eventType = filter.eventType;
  if (eventType) {
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom("events")
          .select("events.id")
          .whereRef("events.tenant_id", "=", "deliveries.tenant_id")
          .whereRef("events.id", "=", "deliveries.event_id")
          .where("events.event_type", "=", eventType),
      ),
    );
  }
  if (after !== undefined) query = query.where("seq", ">", after);
  const rows = await query
    .orderBy("seq")
    .limit(pageSize + 1)
    .execute();
  const page = pageOf(rows, pageSize, (row) => row.seq, scope);
  return { items: page.items.map(toDelivery), nextPageToken: page.nextPageToken };
}

/**
 * The endpoint row (ep) a delivery (d) was made for: its id, and its seq, since a new endpoint can
 * take a deleted one's id. Deliveries made before endpoint_seq was kept match by id alone.
 */
export const OWN_ENDPOINT_ROW = sql<boolean>`ep.tenant_id = d.tenant_id and ep.id = d.endpoint_id
  and (ep.seq = d.endpoint_seq or d.endpoint_seq is null)`;

/** What cancelling a pending delivery writes: no attempt is due, by schedule or by hand. */
export function cancellation(now: Date) {
  return { status: "cancelled", next_attempt_at: null, next_attempt_manual: false, updated_at: now } as const;
}

/** Marks pending deliveries cancelled (their endpoint is gone or disabled); returns those changed. */
export async function cancelDeliveries(
  db: Kysely<Database>,
  ids: readonly string[],
  now: Date,
): Promise<string[]> {
  if (ids.length === 0) return [];
  // Only pending rows are locked: a final one is not waited for, nor held from a purge.
  const rows = await withDeliveriesLocked(db, (query) => byIds(ids)(query).where("status", "=", "pending"))
    .updateTable("deliveries as d")
    .from("locked")
    .whereRef("d.id", "=", "locked.id")
    .set(cancellation(now))
    .where("d.status", "=", "pending")
    .returning("d.id")
    .execute();
  return rows.map((row) => row.id);
}

export function toDelivery(row: Selectable<DeliveryTable>): DeliveryRecord {
  return { ...deliveryFields(row), createdAt: row.created_at };
}

/** A delivery's own fields but its creation time, from its row or a row that includes them. */
export function deliveryFields(
  row: Pick<
    Selectable<DeliveryTable>,
    "id" | "tenant_id" | "event_id" | "endpoint_id" | "status" | "attempt_count" | "next_attempt_at"
  >,
): Omit<DeliveryRecord, "createdAt"> {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
  };
}

/**
 * The update that makes final deliveries pending again for one more (manual) attempt, only while
 * their own endpoint exists and is enabled: not a deleted endpoint's, nor that of a deleted
 * endpoint whose id a new endpoint took (they were never the new endpoint's to receive), nor a
 * disabled endpoint's (its worker would cancel the attempt unmade). The caller says which rows,
 * locked in id order first (see withDeliveriesLocked), and may narrow them by status.
 */
export function reopening(db: Kysely<Database>, now: Date, which: DeliveriesToLock) {
  return withDeliveriesLocked(db, which)
    .updateTable("deliveries as d")
    .from("locked")
    .whereRef("d.id", "=", "locked.id")
    .set({ status: "pending", next_attempt_at: now, next_attempt_manual: true, updated_at: now })
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom("endpoints as ep")
          .select(sql`1`.as("one"))
          .where(OWN_ENDPOINT_ROW)
          .where("ep.status", "=", "enabled"),
      ),
    )
    .returning(["d.id", "d.tenant_id", "d.endpoint_id", "d.attempt_count"]);
}

/** A reopened row, with the attempt number that comes next (attemptCount + 1). */
export function toReopened(row: {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  attempt_count: number;
}): OverdueDelivery {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    endpointId: row.endpoint_id,
    attemptCount: row.attempt_count,
    manual: true,
  };
}

/**
 * Reopens one final delivery (failed, cancelled or delivered: a resend); nothing when it is not
 * final or its endpoint may not take it (see reopening). An endpoint's whole backlog reopens a
 * page at a time (reopenFailedPage).
 */
export async function reopenDelivery(
  db: Kysely<Database>,
  tenantId: string,
  deliveryId: string,
  now: Date,
): Promise<OverdueDelivery | undefined> {
  const row = await reopening(db, now, (query) =>
    byIds([deliveryId])(query)
      .where("tenant_id", "=", tenantId)
      .where("status", "in", ["failed", "cancelled", "delivered"]),
  )
    .where("d.status", "in", ["failed", "cancelled", "delivered"])
    .executeTakeFirst();
  return row && toReopened(row);
}

/** One delivery of a tenant, or NotFoundError. */
export async function getDelivery(
  db: Kysely<Database>,
  tenantId: string,
  id: string,
): Promise<DeliveryRecord> {
  const row = await db
    .selectFrom("deliveries")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`delivery "${id}"`);
  return toDelivery(row);
}

/**
 * The status of the endpoint row a delivery was made for, or undefined once that row is deleted,
 * even when a new endpoint has since taken its id.
 */
export async function ownEndpointStatus(
  db: Kysely<Database>,
  tenantId: string,
  deliveryId: string,
): Promise<EndpointStatusValue | undefined> {
  const row = await db
    .selectFrom("deliveries as d")
    .innerJoin("endpoints as ep", (join) => join.on(OWN_ENDPOINT_ROW))
    .select("ep.status")
    .where("d.tenant_id", "=", tenantId)
    .where("d.id", "=", deliveryId)
    .executeTakeFirst();
  return row?.status;
}

/** Pending deliveries per endpoint, with the oldest due time: the metrics' backlog. */
export async function pendingByEndpoint(
  db: Kysely<Database>,
): Promise<{ tenantId: string; endpointId: string; pending: number; oldestDue: Date | null }[]> {
  const rows = await db
    .selectFrom("deliveries")
    .select((eb) => [
      "tenant_id",
      "endpoint_id",
      eb.fn.countAll<string>().as("pending"),
      eb.fn.min("next_attempt_at").as("oldest_due"),
    ])
    .where("status", "=", "pending")
    .groupBy(["tenant_id", "endpoint_id"])
    .execute();
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    endpointId: row.endpoint_id,
    pending: Number(row.pending),
    oldestDue: row.oldest_due,
  }));
}
