import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { sql } from "kysely";
import {
  createEndpoint,
  deliveryIdFor,
  emitEvent,
  emitEvents,
  getEvent,
  listDeliveries,
  updateEndpoint,
} from "./index.js";
import { openTestStore, racing, someoneWaitsForALock } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

const now = new Date("2026-11-30T10:00:00Z");
const endpoint = (tenantId: string, id: string, eventTypes: string[] = []) =>
  createEndpoint(
    store.db,
    { tenantId, id, url: `https://example.test/${id}`, description: "", eventTypes, secret: "whsec_x" },
    now,
  );

test("emit writes one delivery per enabled endpoint whose types match, and nothing for others", async () => {
  await endpoint("t-match", "all");
  await endpoint("t-match", "invoices", ["invoice.paid", "invoice.void"]);
  await endpoint("t-match", "orders", ["order.created"]);
  await endpoint("t-match", "off");
  await updateEndpoint(store.db, "t-match", "off", { status: "disabled" }, now);
  await endpoint("t-other", "elsewhere");

  const result = await emitEvent(
    store.db,
    { tenantId: "t-match", id: "evt-1", eventType: "invoice.paid", dataJson: "{}" },
    now,
  );
  assert.equal(result.duplicate, false);
  assert.deepEqual(
    result.deliveries.map((d) => d.endpointId),
    ["all", "invoices"],
  );
  const { deliveries } = await getEvent(store.db, "t-match", "evt-1");
  assert.deepEqual(
    deliveries.map((d) => [d.endpointId, d.status, d.attemptCount]),
    [
      ["all", "pending", 0],
      ["invoices", "pending", 0],
    ],
  );
});

test("re-emitting an event id writes nothing and returns the original deliveries", async () => {
  await endpoint("t-dup", "a");
  const first = await emitEvent(store.db, { tenantId: "t-dup", id: "e", eventType: "x", dataJson: "1" }, now);
  await endpoint("t-dup", "b");
  const again = await emitEvent(store.db, { tenantId: "t-dup", id: "e", eventType: "y", dataJson: "2" }, now);
  assert.equal(again.duplicate, true);
  assert.deepEqual(again.deliveries, first.deliveries);
  const { event, deliveries } = await getEvent(store.db, "t-dup", "e");
  assert.equal(event.dataJson, "1");
  assert.equal(deliveries.length, 1);
});

test("concurrent emits of one event id record it once, and every answer names its deliveries", async () => {
  await endpoint("t-race", "a");
  const results = await Promise.all(
    Array.from({ length: 8 }, () =>
      emitEvent(store.db, { tenantId: "t-race", id: "same", eventType: "x", dataJson: "{}" }, now),
    ),
  );
  assert.equal(results.filter((r) => !r.duplicate).length, 1);
  const { items } = await listDeliveries(store.db, { tenantId: "t-race" }, 100, "");
  assert.equal(items.length, 1);
  // A duplicate that raced the first emit's commit still answers with the original delivery.
  for (const result of results)
    assert.deepEqual(
      result.deliveries.map((d) => d.id),
      [items[0]?.id],
    );
});

test(
  "a re-emit that waits on the first emit's commit answers with the original deliveries",
  racing(settings),
  async () => {
    await endpoint("t-wait", "a");
    await endpoint("t-wait", "b");
    const first = await store.db.startTransaction().execute();
    const original = await emitEvent(
      first,
      { tenantId: "t-wait", id: "e", eventType: "x", dataJson: "{}" },
      now,
    );
    const again = emitEvent(store.db, { tenantId: "t-wait", id: "e", eventType: "x", dataJson: "{}" }, now);
    // The re-emit's insert blocks on the uncommitted event row until the first one commits.
    await someoneWaitsForALock(store.db);
    await first.commit().execute();
    const answer = await again;
    assert.equal(answer.duplicate, true);
    assert.deepEqual(answer.deliveries, original.deliveries);
  },
);

test("delivery ids hold no colon and never collide across tenant, event and endpoint", async () => {
  const colon = deliveryIdFor("t", "order:1001", "acct:7");
  assert.ok(!colon.includes(":"), colon);
  assert.ok(!/^\d+$/.test(colon));
  assert.notEqual(deliveryIdFor("t", "order-1", "customer"), deliveryIdFor("t", "order", "1-customer"));
  assert.notEqual(deliveryIdFor("a", "e", "p"), deliveryIdFor("b", "e", "p"));
  assert.equal(deliveryIdFor("t", "e", "p"), deliveryIdFor("t", "e", "p"));

  await endpoint("t-ids", "customer");
  await endpoint("t-ids", "1-customer");
  await endpoint("t-ids", "acct:7");
  const a = await emitEvent(
    store.db,
    { tenantId: "t-ids", id: "order-1", eventType: "x", dataJson: "{}" },
    now,
  );
  const b = await emitEvent(
    store.db,
    { tenantId: "t-ids", id: "order", eventType: "x", dataJson: "{}" },
    now,
  );
  const c = await emitEvent(
    store.db,
    { tenantId: "t-ids", id: "order:1001", eventType: "x", dataJson: "{}" },
    now,
  );
  const ids = [...a.deliveries, ...b.deliveries, ...c.deliveries].map((d) => d.id);
  assert.equal(new Set(ids).size, 9);
  assert.ok(ids.every((id) => !id.includes(":")));
});

test("the delivery ids Emit writes are deliveryIdFor's, for non-ASCII and long parts too", async () => {
  const tenant = "t-ïds-ünicode";
  const endpoints = ["ep-é", "ep-日本", `ep-${"x".repeat(300)}`];
  for (const id of endpoints) await endpoint(tenant, id);
  const eventId = `evt-🎉-${"y".repeat(200)}`;
  const result = await emitEvent(
    store.db,
    { tenantId: tenant, id: eventId, eventType: "x", dataJson: "{}" },
    now,
  );
  assert.deepEqual(
    result.deliveries.map((d) => d.id),
    endpoints.map((ep) => deliveryIdFor(tenant, eventId, ep)),
  );
});

test("the same ids in two tenants are two events", async () => {
  await endpoint("t-one", "ep");
  await endpoint("t-two", "ep");
  const one = await emitEvent(store.db, { tenantId: "t-one", id: "e", eventType: "x", dataJson: "{}" }, now);
  const two = await emitEvent(store.db, { tenantId: "t-two", id: "e", eventType: "x", dataJson: "{}" }, now);
  assert.equal(two.duplicate, false);
  assert.notEqual(one.deliveries[0]?.id, two.deliveries[0]?.id);
});

test("a failed emit leaves nothing half-written", async () => {
  await endpoint("t-fail", "ep");
  // A trigger that rejects the delivery insert makes the transaction fail after the event insert.
  await sql`create function hookline.refuse() returns trigger language plpgsql as $$
    begin raise exception 'refused'; end $$`.execute(store.db);
  await sql`create trigger refuse before insert on hookline.deliveries for each row
    when (new.tenant_id = 't-fail') execute function hookline.refuse()`.execute(store.db);
  await assert.rejects(
    emitEvent(store.db, { tenantId: "t-fail", id: "e", eventType: "x", dataJson: "{}" }, now),
    /refused/,
  );
  await assert.rejects(getEvent(store.db, "t-fail", "e"), /not found/);
  await sql`drop trigger refuse on hookline.deliveries`.execute(store.db);
});

test("many events in one call: each its own deliveries, a repeated id a duplicate, answers in order", async () => {
  await endpoint("t-batch-a", "one");
  await endpoint("t-batch-a", "typed", ["only.this"]);
  await endpoint("t-batch-b", "two");
  await emitEvent(store.db, { tenantId: "t-batch-a", id: "old", eventType: "x", dataJson: "0" }, now);
  const results = await emitEvents(
    store.db,
    [
      { tenantId: "t-batch-a", id: "n1", eventType: "only.this", dataJson: "1" },
      { tenantId: "t-batch-b", id: "n1", eventType: "x", dataJson: "2" },
      { tenantId: "t-batch-a", id: "old", eventType: "x", dataJson: "3" },
      { tenantId: "t-batch-a", id: "n1", eventType: "x", dataJson: "4" },
      { tenantId: "t-batch-none", id: "n1", eventType: "x", dataJson: "5" },
    ],
    now,
  );
  assert.deepEqual(
    results.map((r) => [r.eventId, r.duplicate, r.deliveries.map((d) => d.id)]),
    [
      ["n1", false, ["one", "typed"].map((ep) => deliveryIdFor("t-batch-a", "n1", ep))],
      ["n1", false, [deliveryIdFor("t-batch-b", "n1", "two")]],
      ["old", true, [deliveryIdFor("t-batch-a", "old", "one")]],
      ["n1", true, ["one", "typed"].map((ep) => deliveryIdFor("t-batch-a", "n1", ep))],
      ["n1", false, []],
    ],
  );
  // The first mention won: its data is what was stored.
  assert.equal((await getEvent(store.db, "t-batch-a", "n1")).event.dataJson, "1");
  assert.equal((await getEvent(store.db, "t-batch-a", "old")).event.dataJson, "0");
  assert.deepEqual(
    (await getEvent(store.db, "t-batch-b", "n1")).deliveries.map((d) => [d.endpointId, d.status]),
    [["two", "pending"]],
  );
});

test("a fan-out to thousands of endpoints is one event with all its deliveries", async () => {
  const count = 3000;
  await sql`
    insert into hookline.endpoints (tenant_id, id, url, description, event_types, secret, status, created_at, updated_at)
    select 't-wide', 'ep' || n, 'https://example.test/' || n, '', '{}', 'whsec_x', 'enabled', now(), now()
      from generate_series(1, ${count}) as n`.execute(store.db);
  const result = await emitEvent(
    store.db,
    { tenantId: "t-wide", id: "big", eventType: "x", dataJson: "{}" },
    now,
  );
  assert.equal(result.deliveries.length, count);
  assert.equal(new Set(result.deliveries.map((d) => d.id)).size, count);
});
