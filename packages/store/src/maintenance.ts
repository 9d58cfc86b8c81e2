import { type Kysely, type RawBuilder, sql } from "kysely";
import { ENDPOINTS_IN_KEY_ORDER } from "./lock-order.js";
import type { Database } from "./schema.js";

/**
 * Disables enabled endpoints whose attempts have all failed for failingForMs: the run of failures
 * (no success) began that long before its latest failed attempt. Judged by the attempts, not by
 * the clock alone: an endpoint that failed once and was then sent nothing for days (a receiver
 * mended meanwhile, its next event a week away) is not disabled for days it was not tried.
 * Returns the (tenant, endpoint) pairs disabled.
 */
export async function disableFailingEndpoints(
  db: Kysely<Database>,
  failingForMs: number,
  reason: string,
  now: Date,
): Promise<{ tenantId: string; endpointId: string }[]> {
  const span = sql`${failingForMs} * interval '1 millisecond'`;
  // The endpoint's latest attempt, one step back through attempts_endpoint: while failing_since is
  // set, every attempt since it failed. An attempt of a deleted endpoint with the same id is older
  // than this endpoint's run, so it cannot stand for its latest.
  const latestAttempt = sql`(select a.started_at from hookline.attempts a
      where a.tenant_id = ep.tenant_id and a.endpoint_id = ep.id
      order by a.id desc limit 1)`;
  // Locked in key order first (see ENDPOINTS_IN_KEY_ORDER), then disabled. A row whose lock was
  // awaited is judged again as it is now (a success may have ended its run), as FOR UPDATE does.
  const { rows } = await sql<{ tenant_id: string; id: string }>`
    with locked as materialized (
      select ep.tenant_id, ep.id from hookline.endpoints ep
       where ep.status = 'enabled' and ep.failing_since <= ${now}::timestamptz - ${span}
         and ${latestAttempt} >= ep.failing_since + ${span}
       order by ${ENDPOINTS_IN_KEY_ORDER}
       for no key update
    )
    update hookline.endpoints ep set status = 'disabled', disabled_reason = ${reason}, updated_at = ${now}
      from locked l
     where ep.tenant_id = l.tenant_id and ep.id = l.id
    returning ep.tenant_id, ep.id`.execute(db);
  return rows.map((row) => ({ tenantId: row.tenant_id, endpointId: row.id }));
}

/**
 * Deletes attempts, final deliveries and events older than cutoff, a batch per statement so no
 * lock is held long. Pending deliveries (and their events) are kept. Returns rows deleted.
 */
export async function purgeOlderThan(db: Kysely<Database>, cutoff: Date, batchSize = 1000): Promise<number> {
  let total = await purgeInBatches(
    sql<{ n: number }>`with gone as (delete from hookline.attempts where id in (
        select id from hookline.attempts where started_at < ${cutoff} limit ${batchSize}) returning 1)
      select count(*)::int as n from gone`,
    db,
    batchSize,
  );
  total += await purgeDeliveries(db, cutoff, batchSize);
  total += await purgeInBatches(
    sql<{ n: number }>`with gone as (delete from hookline.events e where (e.tenant_id, e.id) in (
        select ev.tenant_id, ev.id from hookline.events ev where ev.created_at < ${cutoff}
          and not exists (select 1 from hookline.deliveries d where d.tenant_id = ev.tenant_id and d.event_id = ev.id)
        limit ${batchSize}) returning 1)
      select count(*)::int as n from gone`,
    db,
    batchSize,
  );
  return total;
}

async function purgeInBatches(
  statement: RawBuilder<{ n: number }>,
  db: Kysely<Database>,
  batchSize: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await statement.execute(db);
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batchSize) return total;
  }
}

/**
 * Final deliveries older than cutoff, found through their events in creation order: deliveries
 * has no index on created_at, and filtering on it there read the whole table, every run, for the
 * last batch (a statement that outgrows the store timeout on a large table). A delivery is written
 * by its event's statement with the event's created_at, so the events' index finds them exactly.
 * Each batch goes on from the last one's time (events written together share it).
 *
 * A delivery's attempts go with it, however recent: a retry or a resend can start days after its
 * event. Left behind, they were listed for a delivery that no longer exists, and an event emitted
 * again under the same id (so the same delivery id) could not record the attempt numbers they
 * held; the worker then sent that attempt again at every sweep.
 */
async function purgeDeliveries(db: Kysely<Database>, cutoff: Date, batchSize: number): Promise<number> {
  let after = new Date(0);
  let total = 0;
  for (;;) {
    // The batch's rows are locked in id order before they are deleted, as every statement that
    // locks several deliveries takes them (see withDeliveriesLocked): deleted in the search's
    // order, a batch deadlocked with a recovery page reopening the same failed rows. The status is
    // checked again as each row is locked: one reopened (RetryDelivery) after the search read it
    // is read anew there, and kept. The attempts go in a second statement of the same
    // transaction: it reads them afresh, so an attempt recorded while the first waited for a row
    // goes too, and none can be recorded once the row is deleted.
    const { n, attempts, last } = await db.transaction().execute(async (tx) => {
      const { rows: gone } = await sql<{ id: string; created_at: Date }>`
        with batch as materialized (
          select d.id from hookline.events ev
            join hookline.deliveries d on d.tenant_id = ev.tenant_id and d.event_id = ev.id
           where ev.created_at >= ${after} and ev.created_at < ${cutoff} and d.status <> 'pending'
           order by ev.created_at limit ${batchSize}
        ),
        locked as materialized (
          select id from hookline.deliveries
           where status <> 'pending' and id in (select id from batch)
           order by id for update
        )
        delete from hookline.deliveries d using locked where d.id = locked.id
        returning d.id, d.created_at`.execute(tx);
      if (gone.length === 0) return { n: 0, attempts: 0, last: undefined };
      const removed = await tx
        .deleteFrom("attempts")
        .where("delivery_id", "=", sql<string>`any(${sql.val(gone.map((row) => row.id))}::text[])`)
        .executeTakeFirst();
      const newest = Math.max(...gone.map((row) => row.created_at.getTime()));
      return { n: gone.length, attempts: Number(removed.numDeletedRows), last: new Date(newest) };
    });
    total += n + attempts;
    if (n < batchSize || !last) return total;
    after = last;
  }
}

/**
 * VACUUM (ANALYZE) of the tables that need it, by autovacuum's default rule: more dead rows than
 * 50 + 20% of the live ones, or more changes since the last analyze than 50 + 10%. Embedded PGlite
 * runs no autovacuum: without this, rows updated on every attempt (deliveries, BullMQ's jobs)
 * leave dead versions that grow the data directory for ever, and stale statistics lead the
 * planner to walk whole indexes. A whole-database VACUUM every minute instead cost an idle
 * embedded process with 10,000 endpoints more than its traffic did.
 */
export async function vacuumAnalyze(db: Kysely<Database>): Promise<void> {
  // Statistics reach pg_stat_user_tables at most once a second; this run must see the latest.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ schema: string; table: string }>`
    select schemaname as schema, relname as table from pg_stat_user_tables
    where n_dead_tup > 50 + 0.2 * n_live_tup or n_mod_since_analyze > 50 + 0.1 * n_live_tup`.execute(db);
  for (const { schema, table } of rows) await sql`vacuum (analyze) ${sql.id(schema, table)}`.execute(db);
}
