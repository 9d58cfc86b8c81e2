import assert from "node:assert/strict";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { type Kysely, sql } from "kysely";
import { createEndpoint, emitEvents, recordAttempts } from "./index.js";
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

/** Whole reads of the deliveries table so far, as this session's statistics count them. */
async function deliveryTableReads(db: Kysely<Database>): Promise<number> {
  // A session's counts reach the statistics views once flushed; this flushes at the next statement.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ reads: string }>`
    select seq_scan as reads from pg_stat_user_tables where schemaname = 'hookline' and relname = 'deliveries'`.execute(
    db,
  );
  return Number(rows[0]?.reads);
}

test("recording an attempt reads its delivery by key after the table grew, though it was analysed while small", async () => {
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
    // More runs than PostgreSQL needs to settle on one plan for the session's later calls.
    for (const id of early.slice(0, 10)) await recordAttempts(session, [deliveredAttempt(id, now)], now);
    const [late] = await emitMany(session, 20, 5_000);
    assert.ok(late);

    const before = await deliveryTableReads(session);
    const [recorded] = await recordAttempts(session, [deliveredAttempt(late, now)], now);
    assert.equal(recorded?.deliveryStatus, "delivered");
    assert.equal(await deliveryTableReads(session), before, "no read of the whole deliveries table");
  });
});
