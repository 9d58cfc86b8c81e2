import { type Kysely, type Selectable, sql } from "kysely";
import { decodePageToken, pageOf } from "./page-token.js";
import type { AttemptTable, Database, DeliveryStatusValue } from "./schema.js";

export interface AttemptRecord {
  id: string;
  tenantId: string;
  deliveryId: string;
  eventId: string;
  endpointId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number;
  responseBody: string;
  error: string;
  deliveryStatus: DeliveryStatusValue;
}

/** The outcome of one attempt, and where it leaves the delivery. */
export interface AttemptResult {
  deliveryId: string;
  attemptNumber: number;
  startedAt: Date;
  durationMs: number;
  responseStatus: number;
  responseBody: string;
  error: string;
  deliveryStatus: DeliveryStatusValue;
  nextAttemptAt: Date | null;
  /** Set when the endpoint must be disabled (it answered 410): the recorded reason. */
  disableEndpointReason?: string;
}

/**
 * Records a batch of attempts in one transaction. Each is written only if its delivery is still
 * pending at attempt_number - 1, so a job that runs twice yields one row per attempt number.
 * Returns, per input, the new attempt id, or undefined when it was not recorded.
 */
export async function recordAttempts(
  db: Kysely<Database>,
  results: readonly AttemptResult[],
  now: Date,
): Promise<(string | undefined)[]> {
  if (results.length === 0) return [];
  const column = <T>(pick: (r: AttemptResult) => T) => sql.val(results.map(pick));
  return db.transaction().execute(async (tx) => {
    const recorded = await sql<{ delivery_id: string; attempt_number: number; id: string }>`
      with input as (
        select * from unnest(
          ${column((r) => r.deliveryId)}::text[], ${column((r) => r.attemptNumber)}::int[],
          ${column((r) => r.startedAt)}::timestamptz[], ${column((r) => r.durationMs)}::int[],
          ${column((r) => r.responseStatus)}::int[], ${column((r) => clean(r.responseBody))}::text[],
          ${column((r) => clean(r.error))}::text[], ${column((r) => r.deliveryStatus)}::text[],
          ${column((r) => r.nextAttemptAt)}::timestamptz[]
        ) with ordinality as i(delivery_id, attempt_number, started_at, duration_ms, response_status,
                               response_body, error, delivery_status, next_attempt_at, ord)
      ),
      inserted as (
        insert into hookline.attempts (tenant_id, delivery_id, event_id, endpoint_id, attempt_number, started_at,
                              duration_ms, response_status, response_body, error, delivery_status)
        select d.tenant_id, d.id, d.event_id, d.endpoint_id, i.attempt_number, i.started_at,
               i.duration_ms, i.response_status, i.response_body, i.error, i.delivery_status
        from input i join hookline.deliveries d on d.id = i.delivery_id
        where d.status = 'pending' and d.attempt_count = i.attempt_number - 1
        order by i.ord
        on conflict (delivery_id, attempt_number) do nothing
        returning delivery_id, attempt_number, id
      ),
      updated as (
        update hookline.deliveries d
        set status = i.delivery_status, attempt_count = i.attempt_number,
            next_attempt_at = i.next_attempt_at, updated_at = ${now}
        from inserted ins join input i on i.delivery_id = ins.delivery_id and i.attempt_number = ins.attempt_number
        where d.id = ins.delivery_id
        returning d.id
      )
      select delivery_id, attempt_number, id from inserted
    `.execute(tx);
    const ids = new Map(
      recorded.rows.map((row) => [`${row.delivery_id}#${row.attempt_number}`, String(row.id)]),
    );
    const toDisable = results.filter(
      (r) => r.disableEndpointReason && ids.has(`${r.deliveryId}#${r.attemptNumber}`),
    );
    for (const result of toDisable) {
      await sql`
        update hookline.endpoints ep set status = 'disabled', disabled_reason = ${result.disableEndpointReason ?? ""},
               updated_at = ${now}
        from hookline.deliveries d
        where d.id = ${result.deliveryId} and ep.tenant_id = d.tenant_id and ep.id = d.endpoint_id
      `.execute(tx);
    }
    return results.map((r) => ids.get(`${r.deliveryId}#${r.attemptNumber}`));
  });
}

export interface AttemptFilter {
  tenantId?: string;
  eventId?: string;
  endpointId?: string;
  deliveryId?: string;
}

export async function listAttempts(
  db: Kysely<Database>,
  filter: AttemptFilter,
  pageSize: number,
  pageToken: string,
): Promise<{ items: AttemptRecord[]; nextPageToken: string }> {
  const after = decodePageToken(pageToken);
  let query = db.selectFrom("attempts").selectAll();
  if (filter.tenantId) query = query.where("tenant_id", "=", filter.tenantId);
  if (filter.eventId) query = query.where("event_id", "=", filter.eventId);
  if (filter.endpointId) query = query.where("endpoint_id", "=", filter.endpointId);
  if (filter.deliveryId) query = query.where("delivery_id", "=", filter.deliveryId);
  if (after !== undefined) query = query.where("id", ">", after);
  const rows = await query
    .orderBy("id")
    .limit(pageSize + 1)
    .execute();
  const page = pageOf(rows, pageSize, (row) => row.id);
  return { items: page.items.map(toAttempt), nextPageToken: page.nextPageToken };
}

function toAttempt(row: Selectable<AttemptTable>): AttemptRecord {
  return {
    id: String(row.id),
    tenantId: row.tenant_id,
    deliveryId: row.delivery_id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    attemptNumber: row.attempt_number,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    error: row.error,
    deliveryStatus: row.delivery_status,
  };
}

// PostgreSQL text cannot hold NUL; a receiver's body may.
function clean(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}
