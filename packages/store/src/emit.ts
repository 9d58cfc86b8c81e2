import { type Kysely, sql } from "kysely";
import type { Database } from "./schema.js";
import { storedFunction } from "./stored-function.js";

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
 * emitEvent for many events in ONE statement whatever their number (group commit for concurrent
 * Emit calls): it reads the tenants' endpoints and inserts the events and their deliveries. One
 * statement is one transaction, so nothing is half-written, and it spares the BEGIN and COMMIT
 * round trips (five statements became one; Emit's store time is mostly round trips). Events
 * recorded before (duplicates, rare) have their deliveries read in a second statement, only then.
 * Results are in the order of the events. An event id given twice is recorded once; its second
 * mention is a duplicate, as it would be one call later.
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

  // ONE statement: the deliveries each new event gets (one per enabled endpoint of its tenant that
  // takes its type, read in the same snapshot as the inserts), and the inserts. A data-modifying
  // WITH runs to completion whether or not the query reads it. Rows of kind 'new' name the events
  // this statement recorded, 'fanned' the deliveries it created, in creation order. unnest
  // keeps the parameters at a fixed count whatever the batch and fan-out. Delivery ids are
  // deliveryIdFor's, computed here (sha256 of the length-prefixed parts, base64url); a test holds
  // the two to the same ids. Each delivery keeps its endpoint row's seq: a new endpoint that
  // reuses a deleted one's id has another, and so none of the deleted one's deliveries.
  const result = await sql<{
    kind: "new" | "fanned";
    tenant_id: string;
    event_id: string;
    id: string;
    endpoint_id: string;
  }>`select * from ${EMIT_EVENTS.qualified}(
      ${unique.map((e) => e.tenantId)}::text[], ${unique.map((e) => e.id)}::text[],
      ${unique.map((e) => e.eventType)}::text[], ${unique.map((e) => e.dataJson)}::text[], ${now}::timestamptz)
     order by seq`.execute(db);

  const fresh = new Set(
    result.rows
      .filter((row) => row.kind === "new")
      .map((row) => keyOf({ tenantId: row.tenant_id, id: row.event_id })),
  );
  const byEvent = new Map<string, { deliveries: QueuedDelivery[]; duplicate: boolean }>();
  for (const e of unique) byEvent.set(keyOf(e), { deliveries: [], duplicate: !fresh.has(keyOf(e)) });
  for (const row of result.rows)
    if (row.kind !== "new")
      byEvent.get(keyOf({ tenantId: row.tenant_id, id: row.event_id }))?.deliveries.push({
        id: row.id,
        tenantId: row.tenant_id,
        endpointId: row.endpoint_id,
      });
  await readDuplicatesDeliveries(
    db,
    unique.filter((e) => byEvent.get(keyOf(e))?.duplicate),
    byEvent,
    keyOf,
  );

  const answered = new Set<string>();
  return events.map((event) => {
    const key = keyOf(event);
    const found = byEvent.get(key) ?? { deliveries: [], duplicate: true };
    const again = answered.has(key);
    answered.add(key);
    return { eventId: event.id, duplicate: found.duplicate || again, deliveries: found.deliveries };
  });
}

/**
 * Reads the deliveries of events recorded before (duplicates), in a statement of its own after the
 * Emit's. Of its own for two reasons. One: a duplicate whose first emit was still committing when
 * the Emit began was seen by the insert (it waited for that commit) but would not be by a read in
 * the same statement, whose snapshot predates that commit. Two: this statement is planned at each
 * call, for the table as it is then. Inside the stored function it had a plan kept from the
 * session's first call: made while deliveries were analysed empty and a page long (a new install,
 * or a purge that emptied it), that plan found an event's deliveries through the tenant's index,
 * which ties with the event's in cost then, and read all the tenant's deliveries for every
 * duplicate until the next analyse (stored-function.test.ts). Rare, and only for duplicates.
 */
async function readDuplicatesDeliveries(
  db: Kysely<Database>,
  duplicates: readonly NewEvent[],
  byEvent: Map<string, { deliveries: QueuedDelivery[]; duplicate: boolean }>,
  keyOf: (e: { tenantId: string; id: string }) => string,
): Promise<void> {
  if (duplicates.length === 0) return;
  const rows = await sql<{ id: string; tenant_id: string; event_id: string; endpoint_id: string }>`
    select d.id, d.tenant_id, d.event_id, d.endpoint_id
      from hookline.deliveries d
      join unnest(${duplicates.map((e) => e.tenantId)}::text[], ${duplicates.map((e) => e.id)}::text[]) as x(t, i)
        on d.tenant_id = x.t and d.event_id = x.i
     order by d.seq`.execute(db);
  for (const row of rows.rows)
    byEvent.get(keyOf({ tenantId: row.tenant_id, id: row.event_id }))?.deliveries.push({
      id: row.id,
      tenantId: row.tenant_id,
      endpointId: row.endpoint_id,
    });
}

/** emitEvents' statement, kept in the database (see storedFunction). */
export const EMIT_EVENTS = storedFunction({
  base: "emit_events",
  params: [
    ["p_tenant_id", "text[]"],
    ["p_id", "text[]"],
    ["p_event_type", "text[]"],
    ["p_data_json", "text[]"],
    ["p_now", "timestamptz"],
  ],
  returns: "kind text, tenant_id text, event_id text, id text, endpoint_id text, seq bigint",
  body: sql`
    with input as (
      select * from unnest(p_tenant_id, p_id, p_event_type, p_data_json)
             with ordinality as x(tenant_id, id, event_type, data_json, n)
    ),
    recorded as (
      insert into hookline.events (tenant_id, id, event_type, data_json, created_at)
      -- In key order, not the callers': two batches naming the same new events in opposite
      -- orders would each insert one and wait for the other's commit to decide the next (a
      -- deadlock). So events.seq follows the key within a batch, not the callers' order: nothing
      -- reads it (a listing of events that paged by it would need this order changed); the
      -- deliveries keep the callers' order.
      select tenant_id, id, event_type, data_json, p_now from input order by tenant_id, id
      on conflict (tenant_id, id) do nothing
      returning tenant_id, id
    ),
    planned as (
      select x.tenant_id, x.id as event_id, ep.id as endpoint_id, x.n, ep.seq as endpoint_seq,
             'dl_' || rtrim(translate(encode(sha256(convert_to(
               octet_length(x.tenant_id) || ':' || x.tenant_id || octet_length(x.id) || ':' || x.id ||
               octet_length(ep.id) || ':' || ep.id, 'UTF8')), 'base64'), '+/', '-_'), '=') as id
        from input x
        join recorded r on r.tenant_id = x.tenant_id and r.id = x.id
        join hookline.endpoints ep on ep.tenant_id = x.tenant_id and ep.status = 'enabled'
                                  and (cardinality(ep.event_types) = 0 or x.event_type = any(ep.event_types))
    ),
    fanned as (
      insert into hookline.deliveries (id, tenant_id, event_id, endpoint_id, endpoint_seq, status,
                                       attempt_count, next_attempt_at, created_at, updated_at)
      select id, tenant_id, event_id, endpoint_id, endpoint_seq, 'pending', 0, p_now,
             p_now, p_now
        from planned
       order by n, endpoint_seq
      returning id, tenant_id, event_id, endpoint_id, seq
    )
    select 'new' as kind, tenant_id, id as event_id, '' as id, '' as endpoint_id, 0::bigint as seq
      from recorded
    union all
    select 'fanned', tenant_id, event_id, id, endpoint_id, seq from fanned`,
});
