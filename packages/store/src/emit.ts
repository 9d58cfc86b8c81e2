import { type Kysely, sql } from "kysely";
import { deliveryIdFor } from "./ids.js";
import type { Database } from "./schema.js";

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
  const [result] = await emitEvents(db, [event], now);
  if (!result) throw new Error("emitEvents returned no result");
  return result;
}

/**
 * emitEvent for many events in ONE transaction of five statements, whatever their number (group
 * commit for concurrent Emit calls). Results are in the order of the events. An event id given
 * twice is recorded once; its second mention is a duplicate, as it would be one call later.
 */
export async function emitEvents(
  db: Kysely<Database>,
  events: readonly NewEvent[],
  now: Date,
): Promise<EmitResult[]> {
  const keyOf = (e: { tenantId: string; id: string }) => `${e.tenantId.length}:${e.tenantId}${e.id}`;
  const firsts = new Map<string, NewEvent>();
  for (const event of events) if (!firsts.has(keyOf(event))) firsts.set(keyOf(event), event);
  const unique = [...firsts.values()];

  const byEvent = await db.transaction().execute(async (tx) => {
    const inserted = await sql<{ tenant_id: string; id: string }>`
      insert into hookline.events (tenant_id, id, event_type, data_json, created_at)
      select t, i, ty, d, ${now}::timestamptz
        from unnest(${unique.map((e) => e.tenantId)}::text[], ${unique.map((e) => e.id)}::text[],
                    ${unique.map((e) => e.eventType)}::text[], ${unique.map((e) => e.dataJson)}::text[])
             with ordinality as x(t, i, ty, d, n)
       order by n
      on conflict (tenant_id, id) do nothing
      returning tenant_id, id`.execute(tx);
    const fresh = new Set(inserted.rows.map((row) => keyOf({ tenantId: row.tenant_id, id: row.id })));
    const deliveries = new Map<string, { deliveries: QueuedDelivery[]; duplicate: boolean }>();

    // Events seen before: their original deliveries, in creation order.
    const seen = unique.filter((e) => !fresh.has(keyOf(e)));
    for (const e of seen) deliveries.set(keyOf(e), { deliveries: [], duplicate: true });
    if (seen.length > 0) {
      const rows = await sql<{ id: string; tenant_id: string; event_id: string; endpoint_id: string }>`
        select d.id, d.tenant_id, d.event_id, d.endpoint_id
          from hookline.deliveries d
          join unnest(${seen.map((e) => e.tenantId)}::text[], ${seen.map((e) => e.id)}::text[]) as x(t, i)
            on d.tenant_id = x.t and d.event_id = x.i
         order by d.seq`.execute(tx);
      for (const row of rows.rows)
        deliveries.get(keyOf({ tenantId: row.tenant_id, id: row.event_id }))?.deliveries.push({
          id: row.id,
          tenantId: row.tenant_id,
          endpointId: row.endpoint_id,
        });
    }

    // New events: one delivery per enabled endpoint of their tenant that takes their type.
    const created = unique.filter((e) => fresh.has(keyOf(e)));
    if (created.length > 0) {
      const tenants = [...new Set(created.map((e) => e.tenantId))];
      const endpoints = await tx
        .selectFrom("endpoints")
        .select(["tenant_id", "id", "event_types"])
        .where("tenant_id", "in", tenants)
        .where("status", "=", "enabled")
        .orderBy("seq")
        .execute();
      const rows: QueuedDelivery[] = [];
      const eventIds: string[] = [];
      for (const e of created) {
        const own = endpoints
          .filter((ep) => ep.tenant_id === e.tenantId)
          .filter((ep) => ep.event_types.length === 0 || ep.event_types.includes(e.eventType))
          .map((ep) => ({
            id: deliveryIdFor(e.tenantId, e.id, ep.id),
            tenantId: e.tenantId,
            endpointId: ep.id,
          }));
        deliveries.set(keyOf(e), { deliveries: own, duplicate: false });
        rows.push(...own);
        for (const _ of own) eventIds.push(e.id);
      }
      if (rows.length > 0) {
        // unnest keeps the statement's parameters at five whatever the fan-out.
        await sql`
          insert into hookline.deliveries (id, tenant_id, event_id, endpoint_id, status, attempt_count,
                                  next_attempt_at, created_at, updated_at)
          select id, t, e, ep, 'pending', 0, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
            from unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.tenantId)}::text[],
                        ${eventIds}::text[], ${rows.map((r) => r.endpointId)}::text[])
                 with ordinality as x(id, t, e, ep, n)
           order by n`.execute(tx);
      }
    }
    return deliveries;
  });

  const answered = new Set<string>();
  return events.map((event) => {
    const key = keyOf(event);
    const found = byEvent.get(key) ?? { deliveries: [], duplicate: true };
    const again = answered.has(key);
    answered.add(key);
    return { eventId: event.id, duplicate: found.duplicate || again, deliveries: found.deliveries };
  });
}
