import { type Kysely, type Selectable, sql } from "kysely";
import { OWN_ENDPOINT_ROW } from "./deliveries.js";
import { decodePageToken, pageOf, pageScope } from "./page-token.js";
import { LOCK_KEYS } from "./pg-plumbing/locks.js";
import type { AttemptTable, AttemptTriggerValue, Database, DeliveryStatusValue } from "./schema.js";
import { storedFunction } from "./stored-function.js";

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
  trigger: AttemptTriggerValue;
  /** Where the request was sent; null for attempts recorded before Hookline kept it. */
  url: string | null;
}

/** The outcome of one attempt, and where it leaves the delivery. */
export interface AttemptResult {
  deliveryId: string;
  attemptNumber: number;
  /** Where the request was sent. */
  url: string;
  startedAt: Date;
  durationMs: number;
  responseStatus: number;
  responseBody: string;
  error: string;
  deliveryStatus: DeliveryStatusValue;
  nextAttemptAt: Date | null;
  /** Scheduled unless an operator asked for it (RetryDelivery, RecoverEndpoint). */
  trigger?: AttemptTriggerValue;
  /** Set when the endpoint must be disabled (it answered 410): the recorded reason. */
  disableEndpointReason?: string;
}

/** An attempt as recorded: its id, and where it left its delivery. */
export interface RecordedAttempt {
  id: string;
  /**
   * The attempt's outcome, except for a delivery cancelled while the attempt was under way, which
   * stays cancelled unless the attempt succeeded: then no retry follows.
   */
  deliveryStatus: DeliveryStatusValue;
  /** The delivery was already cancelled when this attempt was recorded (its cancel was counted then). */
  wasCancelled: boolean;
}

/**
 * Records a batch of attempts in ONE statement (so one transaction and one round trip: the
 * explicit transaction's five round trips were most of the worker's store time). Each is written
 * only if its delivery is at attempt_number - 1, pending or cancelled during the attempt, so a job
 * that runs twice yields one row per attempt number. The same statement moves the deliveries on,
 * tracks each endpoint's run of failures, and disables the endpoints that answered 410. Returns,
 * per input, the attempt as recorded, or undefined when it was not. Telling the watchers (the
 * runtime's attemptsRecorded signal) is the caller's part, once this has committed.
 */
export async function recordAttempts(
  db: Kysely<Database>,
  results: readonly AttemptResult[],
  now: Date,
): Promise<(RecordedAttempt | undefined)[]> {
  if (results.length === 0) return [];
  const batch = INPUT_COLUMNS.map(([, type, pick]) => sql`${sql.val(results.map(pick))}::${sql.raw(type)}`);
  const recorded = await sql<{
    delivery_id: string;
    attempt_number: number;
    id: string;
    delivery_status: DeliveryStatusValue;
    was_cancelled: boolean;
  }>`select * from ${RECORD_ATTEMPTS.qualified}(${sql.join(batch)}, ${now}::timestamptz)`.execute(db);
  const byAttempt = new Map(
    recorded.rows.map((row) => [
      `${row.delivery_id}#${row.attempt_number}`,
      { id: String(row.id), deliveryStatus: row.delivery_status, wasCancelled: row.was_cancelled },
    ]),
  );
  return results.map((r) => byAttempt.get(`${r.deliveryId}#${r.attemptNumber}`));
}

// The batch as the statement takes it: one array per column, each read from every result.
const INPUT_COLUMNS: readonly (readonly [string, string, (r: AttemptResult) => unknown])[] = [
  ["delivery_id", "text[]", (r) => r.deliveryId],
  ["attempt_number", "int[]", (r) => r.attemptNumber],
  ["started_at", "timestamptz[]", (r) => r.startedAt],
  ["duration_ms", "int[]", (r) => r.durationMs],
  ["response_status", "int[]", (r) => r.responseStatus],
  ["response_body", "text[]", (r) => clean(r.responseBody)],
  ["error", "text[]", (r) => clean(r.error)],
  ["delivery_status", "text[]", (r) => r.deliveryStatus],
  ["next_attempt_at", "timestamptz[]", (r) => r.nextAttemptAt],
  ["trigger", "text[]", (r) => r.trigger ?? "scheduled"],
  ["disable_reason", "text[]", (r) => r.disableEndpointReason ?? null],
  ["url", "text[]", (r) => r.url],
];

// An endpoint's run of failures after this batch (endpoint ep, per_endpoint d below): none after
// a success last; else from the batch's first failure after its last success, or still the run
// it was already in.
const FAILING_SINCE = sql`case
    when d.latest_ok then null
    when d.last_ok is not null then d.first_fail_after_ok
    else coalesce(ep.failing_since, d.first_fail_after_ok) end`;

/**
 * recordAttempts' statement, kept in the database (a large statement, whose parse and analysis
 * were most of its time on embedded PGlite). Data-modifying WITH clauses run to completion
 * whether or not the final select reads them.
 */
export const RECORD_ATTEMPTS = storedFunction({
  base: "record_attempts",
  params: [...INPUT_COLUMNS.map(([name, type]) => [`p_${name}`, type] as const), ["p_now", "timestamptz"]],
  returns: "delivery_id text, attempt_number int, id bigint, delivery_status text, was_cancelled boolean",
  body: sql`
    with
    -- Attempt ids are a resume cursor: serialising these statements makes ids become visible in
    -- increasing order, so a reader that saw id N has already seen every smaller id. Every row
    -- inserted below comes through this lock, so it is held before the first id is drawn.
    attempt_order as materialized (select pg_advisory_xact_lock(${sql.lit(LOCK_KEYS.attemptOrder)}) as locked),
    input as (
      select * from unnest(${sql.join(INPUT_COLUMNS.map(([name]) => sql.ref(`p_${name}`)))})
        with ordinality as i(${sql.join(INPUT_COLUMNS.map(([name]) => sql.ref(name)))}, ord)
    ),
    -- The batch's deliveries, each once, in id order: the order every statement that locks
    -- several deliveries takes them in (see withDeliveriesLocked). Drawn through the lock above,
    -- so no delivery is locked before it is held.
    wanted as materialized (
      select distinct i.delivery_id as id from attempt_order cross join input i order by 1
    ),
    -- One primary-key probe per delivery, in the order above (as loadDeliveryWork does: "d.id =
    -- any(ids)" was planned as a read of the whole table while it was small). Locked as read, so
    -- what is decided below from a row (pending or cancelled, reopened by hand) still holds when
    -- it is updated: a cancel or a reopen that commits meanwhile is read here, not overwritten
    -- there. Materialised on its own: joined with the status filter below, the planner (with
    -- stale statistics) walked the partial pending index, the whole backlog, for every batch.
    target as materialized (
      select d.id, d.tenant_id, d.event_id, d.endpoint_id, d.endpoint_seq, d.status, d.attempt_count,
             d.next_attempt_manual
      from wanted cross join lateral (
        select * from hookline.deliveries d where d.id = wanted.id limit 1 for no key update
      ) d
    ),
    inserted as (
      insert into hookline.attempts (tenant_id, delivery_id, event_id, endpoint_id, attempt_number, started_at,
                            duration_ms, response_status, response_body, error, delivery_status, trigger, url)
      select d.tenant_id, d.id, d.event_id, d.endpoint_id, i.attempt_number, i.started_at,
             i.duration_ms, i.response_status, i.response_body, i.error,
             -- As the worker decided, unless the delivery was cancelled meanwhile, which only a
             -- success overrides (the receiver has it).
             case when d.status = 'cancelled' and i.delivery_status <> 'delivered' then 'cancelled'
                  else i.delivery_status end,
             i.trigger, i.url
      from input i join target d on d.id = i.delivery_id
      -- A delivery cancelled while its attempt was under way (its endpoint deleted) still logs
      -- that attempt: the receiver got the request.
      where d.status in ('pending', 'cancelled') and d.attempt_count = i.attempt_number - 1
        -- Once reopened by hand, only the manual attempt counts: a scheduled one that was still
        -- under way when the delivery was cancelled must not take its place and start a schedule.
        and (not d.next_attempt_manual or i.trigger = 'manual')
      order by i.ord
      on conflict (delivery_id, attempt_number) do nothing
      returning id, tenant_id, endpoint_id, delivery_id, attempt_number, started_at, response_status, delivery_status
    ),
    -- At most one inserted row per delivery (the one attempt number its count allows). The input
    -- is read only for a delivery left pending, for its next attempt's time: joined with every
    -- inserted row, the kept plan (which expects one row of each) rescanned the whole input for
    -- each of them, a third of the statement's time for a batch of 64. Of an attempt listed twice
    -- in a batch, the scan meets first the copy inserted (the insert took them in input order).
    moved_on as (
      update hookline.deliveries d
      set status = ins.delivery_status, attempt_count = ins.attempt_number,
          next_attempt_at = case when ins.delivery_status = 'pending' then (
            select i.next_attempt_at from input i
             where i.delivery_id = ins.delivery_id and i.attempt_number = ins.attempt_number limit 1
          ) end,
          next_attempt_manual = false, updated_at = ${sql.ref("p_now")}
      from inserted ins
      where d.id = ins.delivery_id
    ),
    -- Per endpoint row: its current run of failures (auto-disable reads it; a success ends it),
    -- and whether an attempt it answered with 410 asks for it to be disabled. By the delivery's
    -- endpoint seq too: a late attempt for a deleted endpoint leaves a new one with its id alone.
    per_endpoint as (
      select b.tenant_id, b.endpoint_id, b.endpoint_seq,
             (array_agg(b.ok order by b.id desc))[1] as latest_ok,
             max(b.started_at) filter (where b.ok) as last_ok,
             min(b.started_at) filter (where not b.ok and b.started_at > b.batch_last_ok) as first_fail_after_ok,
             max(b.disable_reason) as disable_reason
      from (
        select ins.*, t.endpoint_seq, i.disable_reason, ins.response_status between 200 and 299 as ok,
               coalesce(max(ins.started_at) filter (where ins.response_status between 200 and 299)
                 over (partition by ins.tenant_id, ins.endpoint_id, t.endpoint_seq), '-infinity') as batch_last_ok
        from inserted ins
        join input i on i.delivery_id = ins.delivery_id and i.attempt_number = ins.attempt_number
        join target t on t.id = ins.delivery_id
      ) b
      group by b.tenant_id, b.endpoint_id, b.endpoint_seq
    ),
    -- The endpoint rows that change, locked in key order first, as every statement that locks
    -- several endpoints takes them (see ENDPOINTS_IN_KEY_ORDER). By then every delivery of the
    -- batch is locked: the grouping above reads all that was inserted. Only rows that change: a
    -- healthy endpoint (or one already failing) is left as it is, rather than given a new row
    -- version, and its index entries, with every batch. A row whose lock was awaited is read
    -- again as it is now, and what it becomes is computed from that.
    endpoints_locked as materialized (
      select ep.row_at, ep.failing_since, d.disable_reason
        -- The endpoints' key order (ENDPOINTS_IN_KEY_ORDER), here read from their deliveries.
        from (select * from per_endpoint order by tenant_id, endpoint_id) d
        -- Then one probe of its key per endpoint, in that order, as target's: a join here was
        -- planned (once: the plan is kept, see storedFunction) as a read of the whole table.
        cross join lateral (
          select ep.ctid as row_at, ${FAILING_SINCE} as failing_since
            from hookline.endpoints ep
           where ${OWN_ENDPOINT_ROW}
             and (d.disable_reason is not null or ep.failing_since is distinct from ${FAILING_SINCE})
           limit 1
           for no key update of ep
        ) ep
    ),
    -- From the locked rows alone: joined with per_endpoint again (estimated at one row), the
    -- update rescanned it for every endpoint, a million comparisons for 1,000 endpoints.
    endpoints_told as (
      update hookline.endpoints ep
      set failing_since = l.failing_since,
          status = case when l.disable_reason is null then ep.status else 'disabled' end,
          disabled_reason = coalesce(l.disable_reason, ep.disabled_reason),
          updated_at = case when l.disable_reason is null then ep.updated_at else ${sql.ref("p_now")} end
      from endpoints_locked l
      -- The very row version locked above (a lock awaited returns the row as it is now), found by
      -- its place: by key, the kept plan read the whole table here too.
      where ep.ctid = l.row_at
    )
    select ins.delivery_id, ins.attempt_number, ins.id, ins.delivery_status, t.status = 'cancelled' as was_cancelled
      from inserted ins join target t on t.id = ins.delivery_id
  `,
});

/** Which attempts to list or stream; an unset or empty field matches any value. */
export interface AttemptFilter {
  tenantId?: string;
  eventId?: string;
  endpointId?: string;
  deliveryId?: string;
  /** Started at or after this time (a portal link sees its endpoint's attempts since it was created). */
  startedFrom?: Date;
}

// The one statement of the filter rule: the query and the in-memory match both read it.
const FILTER_COLUMNS = {
  tenantId: "tenant_id",
  eventId: "event_id",
  endpointId: "endpoint_id",
  deliveryId: "delivery_id",
} as const satisfies Record<Exclude<keyof AttemptFilter, "startedFrom">, keyof AttemptTable>;
const FILTER_FIELDS = Object.keys(FILTER_COLUMNS) as (keyof typeof FILTER_COLUMNS)[];

/** The filter applied to one attempt in memory (a live stream), by the same rule as the query. */
export function matchesAttemptFilter(filter: AttemptFilter, attempt: AttemptRecord): boolean {
  return (
    FILTER_FIELDS.every((field) => !filter[field] || filter[field] === attempt[field]) &&
    (!filter.startedFrom || attempt.startedAt.getTime() >= filter.startedFrom.getTime())
  );
}

/**
 * Up to limit attempts matching the filter with an id above afterId (undefined: from the first),
 * in id order: the one cursor query behind listing, a stream's backfill and the live feed.
 */
export async function attemptsAfter(
  db: Kysely<Database>,
  filter: AttemptFilter,
  afterId: string | undefined,
  limit: number,
): Promise<AttemptRecord[]> {
  let query = db.selectFrom("attempts").selectAll();
  for (const field of FILTER_FIELDS) {
    const value = filter[field];
    if (value) query = query.where(FILTER_COLUMNS[field], "=", value);
  }
  if (filter.startedFrom) query = query.where("started_at", ">=", filter.startedFrom);
  if (afterId !== undefined) query = query.where("id", ">", afterId);
  const rows = await query.orderBy("id").limit(limit).execute();
  return rows.map(toAttempt);
}

/** One page of attempts matching the filter, in id order, and the token for the next page. */
export async function listAttempts(
  db: Kysely<Database>,
  filter: AttemptFilter,
  pageSize: number,
  pageToken: string,
): Promise<{ items: AttemptRecord[]; nextPageToken: string }> {
  const scope = pageScope("attempts", { ...filter });
  const rows = await attemptsAfter(db, filter, decodePageToken(pageToken, scope), pageSize + 1);
  return pageOf(rows, pageSize, (attempt) => attempt.id, scope);
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
    trigger: row.trigger,
    url: row.url,
  };
}

// PostgreSQL text cannot hold NUL; a receiver's body may.
function clean(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/** The highest attempt id recorded so far ("0" when none). */
export async function lastAttemptId(db: Kysely<Database>): Promise<string> {
  const row = await db
    .selectFrom("attempts")
    .select((eb) => eb.fn.coalesce(eb.fn.max("id"), sql<string>`0`).as("id"))
    .executeTakeFirst();
  return String(row?.id ?? "0");
}
