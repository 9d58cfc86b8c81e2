import { type Kysely, sql } from "kysely";
import { type DeliveryRecord, deliveryFields, OWN_ENDPOINT_ROW } from "./deliveries.js";
import type { Database, DeliveryStatusValue, EndpointStatusValue, PreviousSecret } from "./schema.js";
import { storedFunction } from "./stored-function.js";

/** Everything one attempt needs, read in one query for a batch of deliveries. */
export interface DeliveryWork extends Omit<DeliveryRecord, "createdAt"> {
  /** The due attempt was asked for by hand (RetryDelivery, RecoverEndpoint), whatever its job says. */
  nextAttemptManual: boolean;
  eventType: string;
  dataJson: string;
  eventCreatedAt: Date;
  /** Undefined when the endpoint was deleted. */
  endpoint:
    | {
        url: string;
        secret: string;
        /** When `secret` started signing (its last rotation, else the endpoint's creation). */
        secretSince: Date;
        /** Retired secrets that sign too until they expire (rotation grace); since: when they began. */
        previousSecrets: { secret: string; since?: Date; expiresAt: Date }[];
        status: EndpointStatusValue;
      }
    | undefined;
}

/**
 * Reads the work of a batch of deliveries: one primary-key probe per id. Written as "d.id =
 * any(ids)", a batch was planned as a read of the whole table while the table was small for it
 * (up to some 5,000 rows with fresh statistics, 20,000 with lagging ones): the planner prices a
 * probe as a read from disk. Cached, 64 ids took 0.9 ms that way at 12,000 rows and 1.6 ms at
 * 20,000, against 0.14 ms for the probes at any size.
 */
export async function loadDeliveryWork(
  db: Kysely<Database>,
  ids: readonly string[],
): Promise<DeliveryWork[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<WorkRow>`
    select * from ${LOAD_DELIVERY_WORK.qualified}(${sql.val([...new Set(ids)])}::text[])`.execute(db);
  return rows.map((row) => ({
    ...deliveryFields(row),
    nextAttemptManual: row.next_attempt_manual,
    eventType: row.event_type,
    dataJson: row.data_json,
    eventCreatedAt: row.event_created_at,
    endpoint:
      row.url !== null && row.secret !== null && row.secret_since !== null && row.endpoint_status !== null
        ? {
            url: row.url,
            secret: row.secret,
            secretSince: row.secret_since,
            previousSecrets: (row.previous_secrets ?? []).map((p) => ({
              secret: p.secret,
              ...(p.since && { since: new Date(p.since) }),
              expiresAt: new Date(p.expires_at),
            })),
            status: row.endpoint_status,
          }
        : undefined,
  }));
}

/** A row of LOAD_DELIVERY_WORK; the endpoint's columns are null when it was deleted. */
interface WorkRow {
  id: string;
  tenant_id: string;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatusValue;
  attempt_count: number;
  next_attempt_at: Date | null;
  next_attempt_manual: boolean;
  event_type: string;
  data_json: string;
  event_created_at: Date;
  url: string | null;
  secret: string | null;
  previous_secrets: PreviousSecret[] | null;
  secret_since: Date | null;
  endpoint_status: EndpointStatusValue | null;
}

/**
 * loadDeliveryWork's statement, kept in the database (see storedFunction): once per job batch on
 * every worker, and sent as text its parse and planning were about 40% of its cost (real
 * PostgreSQL, 44 deliveries a call: 17.5 us of the server's CPU per delivery against 11.0-11.5).
 * Each row is reached by one probe of its key, which the limit keeps from being turned into a join:
 * kept, a plan with joins read all the endpoints for every batch once the table had grown.
 */
export const LOAD_DELIVERY_WORK = storedFunction({
  base: "load_delivery_work",
  params: [["p_ids", "text[]"]],
  returns: `id text, tenant_id text, event_id text, endpoint_id text, status text, attempt_count integer,
    next_attempt_at timestamptz, next_attempt_manual boolean, event_type text, data_json text,
    event_created_at timestamptz, url text, secret text, previous_secrets jsonb, secret_since timestamptz,
    endpoint_status text`,
  body: sql`
    select d.id, d.tenant_id, d.event_id, d.endpoint_id, d.status, d.attempt_count, d.next_attempt_at,
           d.next_attempt_manual, e.event_type, e.data_json, e.created_at, ep.url, ep.secret,
           ep.previous_secrets, coalesce(ep.secret_since, ep.created_at), ep.status
      from unnest(${sql.ref("p_ids")}) as wanted(id)
      cross join lateral (select * from hookline.deliveries d where d.id = wanted.id limit 1) d
      cross join lateral (
        select * from hookline.events e where e.tenant_id = d.tenant_id and e.id = d.event_id limit 1
      ) e
      -- An endpoint row other than the delivery's own is a new one that took a deleted endpoint's
      -- id: to this delivery, its endpoint is gone.
      left join lateral (select * from hookline.endpoints ep where ${OWN_ENDPOINT_ROW} limit 1) ep on true
  `,
});
