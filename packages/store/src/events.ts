import type { Kysely, Selectable } from "kysely";
import { type DeliveryRecord, toDelivery } from "./deliveries.js";
import { NotFoundError } from "./errors.js";
import type { Database, EventTable } from "./schema.js";

export interface EventRecord {
  tenantId: string;
  id: string;
  eventType: string;
  dataJson: string;
  createdAt: Date;
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
