import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { type Kysely, sql } from "kysely";
import { EMIT_EVENTS } from "./emit.js";
import {
  createEndpoint,
  emitEvents,
  loadDeliveryWork,
  recordAttempts,
  StoredFunctionPrivilegeError,
} from "./index.js";
import { migrate, STORED_FUNCTIONS } from "./migrations.js";
import type { Database } from "./schema.js";
import { deliveredAttempt, openTestStore, storeForThisFile } from "./test-helpers.js";

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
 * Rows of a store table read so far, as this session's statistics count them: by sequential
 * scans, and through indexes (a whole index read by a hash join counts every row too).
 */
async function rowsRead(db: Kysely<Database>, table: Table): Promise<number> {
  // A session's counts reach the statistics views once flushed; this flushes at the next statement.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ read: string }>`
    select seq_tup_read + coalesce(idx_tup_fetch, 0) as read
      from pg_stat_user_tables where schemaname = 'hookline' and relname = ${table}`.execute(db);
  return Number(rows[0]?.read);
}

type Table = "deliveries" | "endpoints" | "events";
const TABLES: readonly Table[] = ["deliveries", "endpoints", "events"];

/** Rows of each table read by a call: a few by keys, where a read of a grown table is thousands. */
async function readBy(db: Kysely<Database>, call: () => Promise<unknown>): Promise<Record<Table, number>> {
  const before = await Promise.all(TABLES.map((table) => rowsRead(db, table)));
  await call();
  const after = await Promise.all(TABLES.map((table) => rowsRead(db, table)));
  return Object.fromEntries(TABLES.map((table, i) => [table, (after[i] ?? 0) - (before[i] ?? 0)])) as Record<
    Table,
    number
  >;
}

const BY_KEY = 10;

const endpoint = (tenantId: string, id: string) => ({
  tenantId,
  id,
  url: "https://x.test",
  description: "",
  eventTypes: [],
  secret: "s",
});

/**
 * Emits and records after the tables grew from `analysedAt` deliveries (when they were analysed,
 * and the session made the plans it keeps) to about 5,000, and 1,000 endpoints of other tenants:
 * each call must read a few rows by key, not the grown tables.
 */
async function readsByKeyAfterGrowth(db: Kysely<Database>, analysedAt: number): Promise<void> {
  await db.connection().execute(async (session) => {
    // Statistics from when the tables were small, and no newer ones: on a server, autovacuum's own
    // analyse of the grown tables would have every session plan afresh, and hide a kept plan.
    for (const table of TABLES)
      await sql`alter table ${sql.id("hookline", table)} set (autovacuum_enabled = false)`.execute(session);
    await createEndpoint(session, endpoint("t", "ep"), now);
    await emitMany(session, 0, analysedAt);
    await sql`analyze hookline.deliveries, hookline.endpoints, hookline.events`.execute(session);
    // Calls after the analyse: the plans the session keeps for its later calls are made now.
    const planned = await emitMany(session, analysedAt, 10);
    for (const id of planned) {
      await loadDeliveryWork(session, [id]);
      await recordAttempts(session, [deliveredAttempt(id, now)], now);
    }
    const [late, another] = await emitMany(session, analysedAt + 10, 5_000);
    assert.ok(late && another);
    // Other tenants' endpoints, which none of the calls below concern.
    for (let i = 0; i < 1_000; i++) await createEndpoint(session, endpoint(`other${i % 10}`, `ep${i}`), now);

    // A new event fans out to its tenant's endpoints; one emitted before reads its deliveries.
    const emitted = await readBy(session, async () => {
      const [again, fresh] = await emitEvents(
        session,
        [
          { tenantId: "t", id: "e0", eventType: "order.paid", dataJson: "{}" },
          { tenantId: "t", id: "e-new", eventType: "order.paid", dataJson: "{}" },
        ],
        now,
      );
      assert.equal(again?.duplicate, true);
      assert.equal(again?.deliveries.length, 1);
      assert.equal(fresh?.deliveries.length, 1);
    });
    assert.ok(
      emitted.deliveries <= BY_KEY,
      `Emit read ${emitted.deliveries} deliveries, not just the event's`,
    );
    assert.ok(emitted.endpoints <= BY_KEY, `Emit read ${emitted.endpoints} endpoints, not just the tenant's`);

    // A worker reads a job's work: its delivery, event and endpoint.
    const loaded = await readBy(session, async () => {
      const [work] = await loadDeliveryWork(session, [late]);
      assert.equal(work?.endpoint?.url, "https://x.test");
    });
    for (const table of TABLES)
      assert.ok(loaded[table] <= BY_KEY, `loading work read ${loaded[table]} ${table}, not just its own`);

    const recorded = await readBy(session, async () => {
      const [attempt] = await recordAttempts(session, [deliveredAttempt(late, now)], now);
      assert.equal(attempt?.deliveryStatus, "delivered");
    });
    assert.ok(
      recorded.deliveries <= BY_KEY,
      `recording read ${recorded.deliveries} deliveries, not just its own`,
    );
    assert.ok(
      recorded.endpoints <= BY_KEY,
      `recording read ${recorded.endpoints} endpoints, not just its own`,
    );

    // A failure starts the endpoint's run of failures: its row is locked and updated.
    const failed = await readBy(session, async () => {
      const [attempt] = await recordAttempts(
        session,
        [{ ...deliveredAttempt(another, now), responseStatus: 500, deliveryStatus: "failed" }],
        now,
      );
      assert.equal(attempt?.deliveryStatus, "failed");
    });
    assert.ok(
      failed.endpoints <= BY_KEY,
      `recording a failure read ${failed.endpoints} endpoints, not just its own`,
    );
    const { rows } = await sql<{ failing: boolean }>`
      select failing_since is not null as failing from hookline.endpoints where tenant_id = 't' and id = 'ep'`.execute(
      session,
    );
    assert.equal(rows[0]?.failing, true);
  });
}

test("emitting, loading a delivery's work and recording its attempt read by key after the tables grew, though they were analysed while small", () =>
  readsByKeyAfterGrowth(store.db, 20));

test("...and after they grew from empty, as on a new install or after a purge that emptied them", async () => {
  const fresh = await openTestStore(settings);
  try {
    await readsByKeyAfterGrowth(fresh.db, 0);
  } finally {
    await fresh.close();
  }
});

test("a store connection names the stored functions it calls, as the ready lines show them", async () => {
  const fresh = await openTestStore(settings);
  try {
    const { rows } = await sql<{ name: string }>`
      select n.nspname || '.' || p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'hookline'`.execute(fresh.db);
    const inDatabase = rows.map((row) => row.name);
    assert.equal(fresh.storedFunctions.length, STORED_FUNCTIONS.length);
    for (const name of fresh.storedFunctions)
      assert.ok(inDatabase.includes(name), `${name} is in the database`);
  } finally {
    await fresh.close();
  }
});

test("a store no other version can use drops the functions earlier versions kept; a shared one keeps them", async () => {
  await store.db.connection().execute(async (session) => {
    const db = session as Kysely<unknown>;
    // An earlier version's Emit, and a function of the same prefix that is no version of it.
    const earlier = `${EMIT_EVENTS.base}_0123456789abcdef`;
    const unrelated = `${EMIT_EVENTS.base}_by_hand`;
    for (const name of [earlier, unrelated])
      await sql`create function ${sql.id("hookline", name)}() returns int language sql as 'select 1'`.execute(
        db,
      );
    const present = async () => {
      const { rows } = await sql<{ name: string }>`
        select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'hookline'`.execute(db);
      return rows.map((row) => row.name).sort();
    };
    const current = STORED_FUNCTIONS.map((fn) => fn.name);
    try {
      await migrate(db);
      assert.deepEqual(await present(), [...current, earlier, unrelated].sort(), "a shared store keeps them");
      await migrate(db, { soleVersion: true });
      assert.deepEqual(await present(), [...current, unrelated].sort());
    } finally {
      for (const name of [earlier, unrelated])
        await sql`drop function if exists ${sql.id("hookline", name)}()`.execute(db);
    }
  });
});

test("a role that may use the store but not create a new version's functions is stopped with the GRANT it needs", async () => {
  const role = `hookline_no_create_${randomUUID().slice(0, 8)}`;
  await store.db.connection().execute(async (session) => {
    const owner = session as Kysely<unknown>;
    // This version's functions, as a start of it finds them after an upgrade: not there yet.
    for (const fn of STORED_FUNCTIONS) await sql`drop function ${fn.qualified}`.execute(session);
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
        select count(*)::int as n from pg_proc where proname in (${sql.join(STORED_FUNCTIONS.map((fn) => fn.name))})`.execute(
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
