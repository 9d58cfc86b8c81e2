import { type Kysely, type Selectable, sql } from "kysely";
import { type DeliveryRecord, toDelivery } from "./deliveries.js";
import { NotFoundError } from "./errors.js";
import { deliveryIdFor } from "./ids.js";
import type { Database, EventTable } from "./schema.js";

export interface EventRecord {
  tenantId: string;
  id: string;
  eventType: string;
  dataJson: string;
  createdAt: Date;
}

export interface NewEvent {
  tenantId: string;
  id: string;
  eventType: string;
  dataJson: string;
}

/** What a delivery needs to be queued: its id and the endpoint whose queue takes it. */
export interface QueuedDelivery {
  id: string;
  tenantId: string;
  endpointId: string;
}

export interface EmitResult {
  eventId: string;
  duplicate: boolean;
  deliveries: QueuedDelivery[];
}

/**
 * Records an event and one pending delivery per enabled endpoint of the tenant that takes its
 * type, in one transaction. An event id the tenant already used writes nothing and returns the
 * original deliveries with duplicate set.
 */
export async function emitEvent(db: Kysely<Database>, event: NewEvent, now: Date): Promise<EmitResult> {
  return db.transaction().execute(async (tx) => {
    const inserted = await tx
      .insertInto("events")
      .values({
        tenant_id: event.tenantId,
        id: event.id,
        event_type: event.eventType,
        data_json: event.dataJson,
        created_at: now,
      })
      .onConflict((oc) => oc.columns(["tenant_id", "id"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) {
      const existing = await tx
        .selectFrom("deliveries")
        .select(["id", "tenant_id", "endpoint_id"])
        .where("tenant_id", "=", event.tenantId)
        .where("event_id", "=", event.id)
        .orderBy("seq")
        .execute();
      return {
        eventId: event.id,
        duplicate: true,
        deliveries: existing.map((row) => ({
          id: row.id,
          tenantId: row.tenant_id,
          endpointId: row.endpoint_id,
        })),
      };
    }
    const endpoints = await tx
      .selectFrom("endpoints")
      .select("id")
      .where("tenant_id", "=", event.tenantId)
      .where("status", "=", "enabled")
      .where((eb) =>
        eb.or([
          eb(sql`cardinality(event_types)`, "=", 0),
          eb(sql.val(event.eventType), "=", sql<string>`any(event_types)`),
        ]),
      )
      .orderBy("seq")
      .execute();
    const deliveries = endpoints.map((endpoint) => ({
      id: deliveryIdFor(event.tenantId, event.id, endpoint.id),
      tenantId: event.tenantId,
      endpointId: endpoint.id,
    }));
    if (deliveries.length > 0) {
      await tx
        .insertInto("deliveries")
        .values(
          deliveries.map((delivery) => ({
            id: delivery.id,
            tenant_id: event.tenantId,
            event_id: event.id,
            endpoint_id: delivery.endpointId,
            status: "pending" as const,
            attempt_count: 0,
            next_attempt_at: now,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    }
    return { eventId: event.id, duplicate: false, deliveries };
  });
}

export async function getEvent(
  db: Kysely<Database>,
  tenantId: string,
  eventId: string,
): Promise<{ event: EventRecord; deliveries: DeliveryRecord[] }> {
  const row = await db
    .selectFrom("events")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("id", "=", eventId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError(`event "${eventId}"`);
  const deliveries = await db
    .selectFrom("deliveries")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("event_id", "=", eventId)
    .orderBy("seq")
    .execute();
  return { event: toEvent(row), deliveries: deliveries.map(toDelivery) };
}

function toEvent(row: Selectable<EventTable>): EventRecord {
  return {
    tenantId: row.tenant_id,
    id: row.id,
    eventType: row.event_type,
    dataJson: row.data_json,
    createdAt: row.created_at,
  };
}
