import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { type Kysely, sql } from "kysely";
import { RECORD_ATTEMPTS } from "./attempts.js";
import { EMIT_EVENTS } from "./emit.js";
import { createEndpoint, emitEvents, recordAttempts, StoredFunctionPrivilegeError } from "./index.js";
import { migrate } from "./migrations.js";
import type { Database } from "./schema.js";
import { deliveredAttempt, storeForThisFile } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const store = storeForThisFile(settings);
const now = new Date();

/** New events for tenant t, in statements of 500: their deliveries' ids. */
async function emitMany(db: Kysely<Database>, from: number, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let start = from; start < from + count; start += 500) {
    const events = Array.from({ length: Math.min(500, from + count - start) }, (_, i) => ({
      tenantId: "t",
      id: `e${start + i}`,
      eventType: "order.paid",
      dataJson: "{}",
    }));
    for (const result of await emitEvents(db, events, now)) ids.push(...result.deliveries.map((d) => d.id));
  }
  return ids;
}

/**
 * Rows of the deliveries table read so far, as this session's statistics count them: by
 * sequential scans, and through indexes (a whole index read by a hash join counts every row too).
 */
async function deliveryRowsRead(db: Kysely<Database>): Promise<number> {
  // A session's counts reach the statistics views once flushed; this flushes at the next statement.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ read: string }>`
    select seq_tup_read + coalesce(idx_tup_fetch, 0) as read
      from pg_stat_user_tables where schemaname = 'hookline' and relname = 'deliveries'`.execute(db);
  return Number(rows[0]?.read);
}

/** At most a few rows read by keys: a read of the whole grown table is thousands. */
const BY_KEY = 10;

test("emitting and recording an attempt read deliveries by key after the table grew, though it was analysed while small", async () => {
  await store.db.connection().execute(async (session) => {
    await createEndpoint(
      session,
      { tenantId: "t", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
      now,
    );
    // Statistics from when the table was small, and no newer ones: on a server, autovacuum's own
    // analyse of the grown table would have every session plan afresh, and hide a kept plan.
    await sql`alter table hookline.deliveries set (autovacuum_enabled = false)`.execute(session);
    const early = await emitMany(session, 0, 20);
    await sql`analyze hookline.deliveries`.execute(session);
    // Calls after the analyse: the plan the session keeps for its later calls is made now.
    for (const id of early.slice(0, 10)) await recordAttempts(session, [deliveredAttempt(id, now)], now);
    const [late] = await emitMany(session, 20, 5_000);
    assert.ok(late);

    // Emitting again an event already emitted reads its deliveries (by tenant and event).
    const emitReadsBefore = await deliveryRowsRead(session);
    const [again] = await emitEvents(
      session,
      [{ tenantId: "t", id: "e0", eventType: "order.paid", dataJson: "{}" }],
      now,
    );
    assert.equal(again?.duplicate, true);
    assert.equal(again?.deliveries.length, 1);
    const emitRead = (await deliveryRowsRead(session)) - emitReadsBefore;
    assert.ok(emitRead <= BY_KEY, `Emit read ${emitRead} deliveries, not just the event's`);

    const before = await deliveryRowsRead(session);
    const [recorded] = await recordAttempts(session, [deliveredAttempt(late, now)], now);
    assert.equal(recorded?.deliveryStatus, "delivered");
    const recordRead = (await deliveryRowsRead(session)) - before;
    assert.ok(recordRead <= BY_KEY, `recording read ${recordRead} deliveries, not just its own`);
  });
});

test("a role that may use the store but not create a new version's functions is stopped with the GRANT it needs", async () => {
  const role = `hookline_no_create_${randomUUID().slice(0, 8)}`;
  await store.db.connection().execute(async (session) => {
    const owner = session as Kysely<unknown>;
    // This version's functions, as a start of it finds them after an upgrade: not there yet.
    for (const fn of [EMIT_EVENTS, RECORD_ATTEMPTS])
      await sql`drop function ${fn.qualified}`.execute(session);
    await sql`create role ${sql.id(role)}`.execute(session);
    try {
      await sql`grant usage on schema hookline to ${sql.id(role)}`.execute(session);
      await sql`grant select, insert, update, delete on all tables in schema hookline to ${sql.id(role)}`.execute(
        session,
      );
      await sql`set role ${sql.id(role)}`.execute(session);
      await assert.rejects(migrate(owner), (error: unknown) => {
        assert.ok(error instanceof StoredFunctionPrivilegeError, String(error));
        assert.match(error.message, new RegExp(`GRANT CREATE ON SCHEMA hookline TO "${role}"`));
        assert.match(error.message, new RegExp(EMIT_EVENTS.name));
        assert.match(error.message, /permission denied for schema hookline/);
        return true;
      });
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_proc where proname in (${EMIT_EVENTS.name}, ${RECORD_ATTEMPTS.name})`.execute(
        session,
      );
      assert.equal(rows[0]?.n, 0, "nothing half-created");
    } finally {
      await sql`reset role`.execute(session);
      await sql`drop owned by ${sql.id(role)}`.execute(session);
      await sql`drop role ${sql.id(role)}`.execute(session);
      // The schema's owner starts it: the functions are made.
      await migrate(owner);
    }
  });
});
