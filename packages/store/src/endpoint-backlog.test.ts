import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import {
  cancelPendingOf,
  createEndpoint,
  deleteEndpoint,
  emitEvents,
  reopenFailedPage,
  updateEndpoint,
} from "./index.js";
import type { DeliveryStatusValue } from "./schema.js";
import { openTestStore } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

const NOW = new Date("2026-12-03T12:00:00Z");

async function endpoint(tenantId: string, id: string): Promise<void> {
  await createEndpoint(
    store.db,
    { tenantId, id, url: "https://example.test/", description: "", eventTypes: [], secret: "whsec_x" },
    NOW,
  );
}

/** Emits events at a time and leaves their deliveries in a status; returns the delivery ids. */
async function deliveries(
  tenantId: string,
  prefix: string,
  count: number,
  at: Date,
  status: DeliveryStatusValue,
): Promise<string[]> {
  const events = Array.from({ length: count }, (_, n) => ({
    tenantId,
    id: `${prefix}${n}`,
    eventType: "x",
    dataJson: "{}",
  }));
  const ids = (await emitEvents(store.db, events, at)).flatMap((r) => r.deliveries.map((d) => d.id));
  await store.db
    .updateTable("deliveries")
    .set({ status, attempt_count: 3, next_attempt_at: status === "pending" ? NOW : null })
    .where("id", "in", ids)
    .execute();
  return ids;
}

async function statusOf(ids: readonly string[]): Promise<DeliveryStatusValue[]> {
  const rows = await store.db.selectFrom("deliveries").select("status").where("id", "in", ids).execute();
  return [...new Set(rows.map((row) => row.status))];
}

test("a recovery reopens an endpoint's failed deliveries since a time, page after page, each once", async () => {
  await endpoint("rec", "ep");
  await endpoint("rec", "other");
  const since = new Date("2026-12-03T00:00:00Z");
  const failed = await deliveries("rec", "f", 7, new Date("2026-12-03T01:00:00Z"), "failed");
  const tooOld = await deliveries("rec", "old", 2, new Date("2026-12-02T23:00:00Z"), "failed");
  const delivered = await deliveries("rec", "ok", 2, new Date("2026-12-03T02:00:00Z"), "delivered");
  // Every emit above also made a delivery to "other": only "ep"'s are the recovery's.
  const target = { tenantId: "rec", endpointId: "ep", since };

  const pages: string[][] = [];
  let after: string | undefined;
  do {
    const page = await reopenFailedPage(store.db, target, after, NOW, 3);
    pages.push(page.reopened.map((d) => d.id));
    assert.ok(page.reopened.every((d) => d.attemptCount === 3 && d.manual && d.endpointId === "ep"));
    after = page.after;
  } while (after !== undefined && pages.length < 10);

  assert.deepEqual(
    pages.map((p) => p.length),
    [3, 3, 1],
  );
  const failedOfEp = new Set(
    (
      await store.db
        .selectFrom("deliveries")
        .select("id")
        .where("id", "in", failed)
        .where("endpoint_id", "=", "ep")
        .execute()
    ).map((row) => row.id),
  );
  assert.equal(failedOfEp.size, 7);
  assert.deepEqual(new Set(pages.flat()), failedOfEp, "each of ep's failed deliveries once");
  assert.deepEqual(await statusOf([...failedOfEp]), ["pending"]);
  assert.deepEqual(await statusOf(failed.filter((id) => !failedOfEp.has(id))), ["failed"], "other's stay");
  assert.deepEqual(await statusOf(tooOld), ["failed"], "created before since");
  assert.deepEqual(await statusOf(delivered), ["delivered"]);
  assert.deepEqual((await reopenFailedPage(store.db, target, undefined, NOW, 3)).reopened, [], "once");
});

test("a disabled endpoint's pages reopen nothing, and the walk still ends", async () => {
  await endpoint("off", "ep");
  const failed = await deliveries("off", "f", 5, NOW, "failed");
  await updateEndpoint(store.db, "off", "ep", { status: "disabled" }, NOW);
  const target = { tenantId: "off", endpointId: "ep", since: new Date(NOW.getTime() - 3_600_000) };
  const first = await reopenFailedPage(store.db, target, undefined, NOW, 2);
  assert.deepEqual(first.reopened, []);
  assert.notEqual(first.after, undefined, "the walk moves past rows it may not reopen");
  let after = first.after;
  let pages = 1;
  while (after !== undefined && pages < 10) {
    after = (await reopenFailedPage(store.db, target, after, NOW, 2)).after;
    pages += 1;
  }
  assert.equal(pages, 3);
  assert.deepEqual(await statusOf(failed), ["failed"]);
});

test("a deleted endpoint's pending deliveries are cancelled page by page; a new endpoint with its id keeps its own", async () => {
  await endpoint("del", "ep");
  const early = new Date(NOW.getTime() - 60_000);
  // Due at two times, pages of 2: the walk by due time must cross from one to the next.
  const pending = [
    ...(await deliveries("del", "p", 3, NOW, "pending")),
    ...(await deliveries("del", "q", 2, early, "pending")),
  ];
  await store.db
    .updateTable("deliveries")
    .set({ next_attempt_at: early })
    .where("id", "in", pending.slice(3))
    .execute();
  const delivered = await deliveries("del", "d", 1, NOW, "delivered");
  const deleted = await deleteEndpoint(store.db, "del", "ep", NOW);
  await endpoint("del", "ep");
  const successors = await deliveries("del", "n", 2, NOW, "pending");

  assert.deepEqual(
    await cancelPendingOf(store.db, deleted, NOW, { stop: AbortSignal.abort(), pageSize: 2 }),
    { cancelled: 0, complete: false },
    "asked to stop, it stops before the next page",
  );
  assert.deepEqual(await statusOf(pending), ["pending"]);
  assert.deepEqual(await cancelPendingOf(store.db, deleted, NOW, { pageSize: 2 }), {
    cancelled: 5,
    complete: true,
  });
  assert.deepEqual(await statusOf(pending), ["cancelled"]);
  assert.deepEqual(await statusOf(delivered), ["delivered"]);
  assert.deepEqual(await statusOf(successors), ["pending"], "the new endpoint's deliveries stay");
  assert.deepEqual(await cancelPendingOf(store.db, deleted, NOW, { pageSize: 2 }), {
    cancelled: 0,
    complete: true,
  });
  await assert.rejects(deleteEndpoint(store.db, "del", "nope", NOW), /endpoint "nope" not found/);
});

test("deliveries made before they recorded their endpoint's seq are cancelled with the row", async () => {
  await endpoint("unbound", "ep");
  const old = await deliveries("unbound", "u", 3, NOW, "pending");
  await store.db
    .updateTable("deliveries")
    .set({ endpoint_seq: null } as never)
    .where("id", "in", old)
    .execute();
  const deleted = await deleteEndpoint(store.db, "unbound", "ep", NOW);
  // Before any page: a new endpoint taking the id now must not find them pending.
  assert.deepEqual(await statusOf(old), ["cancelled"]);
  assert.equal(deleted.cancelledWithRow, 3, "counted, for the cancelled deliveries metric");
});
