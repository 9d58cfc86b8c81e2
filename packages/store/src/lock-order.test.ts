import assert from "node:assert/strict";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { type RawBuilder, sql, type Transaction } from "kysely";
import {
  type AttemptResult,
  cancelDeliveries,
  createEndpoint,
  deleteEndpoint,
  disableFailingEndpoints,
  emitEvents,
  getDelivery,
  getEndpoint,
  listAttempts,
  purgeOlderThan,
  recordAttempts,
  reopenDelivery,
  reopenFailedPage,
} from "./index.js";
import type { Database } from "./schema.js";
import { racing, someoneWaitsForALock, storeForThisFile } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const store = storeForThisFile(settings);
const now = new Date();

/** An endpoint of the tenant that takes every event type. */
const anEndpoint = (tenantId: string, id: string) =>
  createEndpoint(
    store.db,
    { tenantId, id, url: "https://x.test", description: "", eventTypes: [], secret: "s" },
    now,
  );

const failedAttempt = (deliveryId: string): AttemptResult => ({
  deliveryId,
  attemptNumber: 1,
  url: "https://x.test",
  startedAt: now,
  durationMs: 3,
  responseStatus: 500,
  responseBody: "",
  error: "",
  deliveryStatus: "pending",
  nextAttemptAt: new Date(now.getTime() + 60_000),
});

/**
 * An endpoint's deliveries, and two of them, `first` before `second` in id order but stored after
 * it: a statement that locks rows in the table's order takes `second` first.
 */
async function deliveriesOutOfOrder(tenantId: string) {
  await anEndpoint(tenantId, "ep");
  const emitted = await emitEvents(
    store.db,
    Array.from({ length: 40 }, (_, n) => ({ tenantId, id: `e${n}`, eventType: "x", dataJson: "{}" })),
    now,
  );
  const ids = emitted.flatMap((e) => e.deliveries.map((d) => d.id));
  const { rows } = await sql<{ first: string; second: string }>`
    select a.id as first, b.id as second from hookline.deliveries a, hookline.deliveries b
     where a.tenant_id = ${tenantId} and b.tenant_id = ${tenantId} and a.id < b.id and b.ctid < a.ctid
     limit 1`.execute(store.db);
  const pair = rows[0];
  assert.ok(pair, "40 hashed ids hold a pair stored out of id order");
  return { ids, ...pair };
}

/** True when the row `earlier` reads (its ctid) is stored before the one `later` reads: a scan takes it first. */
async function storedBefore(earlier: RawBuilder<unknown>, later: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ before: boolean }>`select (${earlier}) < (${later}) as before`.execute(
    store.db,
  );
  return rows[0]?.before === true;
}

/**
 * Runs `one` and then `other` while a third transaction holds what `hold` takes, so both queue
 * behind it with whatever rows they already hold, then lets them go. Locking in different orders,
 * each would then hold a row the other waits for, and PostgreSQL would abort one as a deadlock.
 */
async function raceBehind<A, B>(
  hold: (trx: Transaction<Database>) => Promise<unknown>,
  one: () => Promise<A>,
  other: () => Promise<B>,
) {
  const holder = await store.db.startTransaction().execute();
  await hold(holder);
  const ones = one();
  await someoneWaitsForALock(store.db, 1);
  const others = other();
  await someoneWaitsForALock(store.db, 2);
  await holder.commit().execute();
  return Promise.all([ones, others]);
}

const holdingDelivery = (id: string) => (trx: Transaction<Database>) =>
  sql`select 1 from hookline.deliveries where id = ${id} for no key update`.execute(trx);

test(
  "recording a batch of attempts while the same deliveries are cancelled (their endpoint deleted) ends without a deadlock",
  racing(settings),
  async () => {
    const { ids, first, second } = await deliveriesOutOfOrder("cancel");
    const [recorded, cancelled] = await raceBehind(
      holdingDelivery(first),
      () => recordAttempts(store.db, [failedAttempt(first), failedAttempt(second)], now),
      () => cancelDeliveries(store.db, ids, now),
    );
    assert.equal(recorded.filter(Boolean).length, 2, "both attempts are recorded");
    assert.equal(cancelled.length, ids.length, "every delivery is cancelled");
    for (const deliveryId of [first, second]) {
      const { items } = await listAttempts(store.db, { deliveryId }, 10, "");
      assert.equal(items.length, 1, "one attempt each, whichever statement went first");
      assert.equal((await getDelivery(store.db, "cancel", deliveryId)).status, "cancelled");
    }
  },
);

test(
  "purging old final deliveries while a recovery reopens the same ones ends without a deadlock",
  racing(settings),
  async () => {
    const tenantId = "purge";
    await anEndpoint(tenantId, "ep");
    // A day old, a minute apart, oldest first: the purge finds deliveries through their events'
    // age, and the table holds them in the same order.
    for (let n = 0; n < 40; n++) {
      const at = new Date(now.getTime() - 86_400_000 + n * 60_000);
      await emitEvents(store.db, [{ tenantId, id: `e${n}`, eventType: "x", dataJson: "{}" }], at);
    }
    const { rows } = await sql<{ first: string; second: string }>`
      select a.id as first, b.id as second from hookline.deliveries a, hookline.deliveries b
       where a.tenant_id = ${tenantId} and b.tenant_id = ${tenantId} and a.id < b.id
         and b.created_at < a.created_at and b.ctid < a.ctid
       limit 1`.execute(store.db);
    const pair = rows[0];
    assert.ok(pair, "40 hashed ids hold a pair made out of id order");
    const { first, second } = pair;
    await store.db
      .updateTable("deliveries")
      .set({ status: "failed" })
      .where("id", "in", [first, second])
      .execute();
    // The update wrote new row versions: the race below is only a test while they are still
    // stored out of id order.
    assert.ok(
      await storedBefore(
        sql`select ctid from hookline.deliveries where id = ${second}`,
        sql`select ctid from hookline.deliveries where id = ${first}`,
      ),
      "still stored out of id order once failed",
    );

    const [recovery] = await raceBehind(
      holdingDelivery(first),
      () => reopenFailedPage(store.db, { tenantId, endpointId: "ep", since: new Date(0) }, undefined, now),
      () => purgeOlderThan(store.db, now),
    );
    assert.deepEqual(recovery.reopened.map((d) => d.id).sort(), [first, second].sort());
    for (const id of [first, second]) {
      assert.equal((await getDelivery(store.db, tenantId, id)).status, "pending", "reopened, and kept");
    }
  },
);

test(
  "recording an attempt while its endpoint is deleted, its deliveries unbound to the row, ends without a deadlock",
  racing(settings),
  async () => {
    const tenantId = "unbound";
    const { ids, first } = await deliveriesOutOfOrder(tenantId);
    // As deliveries made before they recorded their endpoint row's seq: the delete cancels them
    // in its own transaction, while recording an attempt updates the endpoint's run of failures.
    await sql`update hookline.deliveries set endpoint_seq = null where tenant_id = ${tenantId}`.execute(
      store.db,
    );

    const [recorded, deleted] = await raceBehind(
      holdingDelivery(first),
      () => recordAttempts(store.db, [failedAttempt(first)], now),
      () => deleteEndpoint(store.db, tenantId, "ep", now),
    );
    assert.ok(recorded[0], "the attempt is recorded");
    assert.equal(deleted.cancelledWithRow, ids.length, "every delivery is cancelled with the row");
    assert.equal((await getDelivery(store.db, tenantId, first)).status, "cancelled");
  },
);

test(
  "recording attempts for two endpoints while auto-disable judges the same two ends without a deadlock",
  racing(settings),
  async () => {
    const tenantId = "disable";
    // "b" created first, so stored before "a": a scan of the table takes "b" first.
    for (const id of ["b", "a"]) await anEndpoint(tenantId, id);
    const [early, late] = await emitEvents(
      store.db,
      ["early", "late"].map((id) => ({ tenantId, id, eventType: "x", dataJson: "{}" })),
      now,
    );
    const deliveryTo = (emitted: typeof early, endpointId: string) => {
      const found = emitted?.deliveries.find((d) => d.endpointId === endpointId);
      assert.ok(found, `a delivery to ${endpointId}`);
      return found.id;
    };
    // Both failing for an hour by their attempts: auto-disable takes both.
    await recordAttempts(
      store.db,
      ["a", "b"].map((endpointId) => failedAttempt(deliveryTo(early, endpointId))),
      now,
    );
    await sql`update hookline.endpoints set failing_since = ${new Date(now.getTime() - 3_600_000)}
               where tenant_id = ${tenantId}`.execute(store.db);
    const succeeded = (deliveryId: string): AttemptResult => ({
      ...failedAttempt(deliveryId),
      responseStatus: 200,
      deliveryStatus: "delivered",
      nextAttemptAt: null,
    });

    assert.ok(
      await storedBefore(
        sql`select ctid from hookline.endpoints where tenant_id = ${tenantId} and id = 'b'`,
        sql`select ctid from hookline.endpoints where tenant_id = ${tenantId} and id = 'a'`,
      ),
      "b is stored before a",
    );

    const [recorded, disabled] = await raceBehind(
      (trx) =>
        sql`select 1 from hookline.endpoints where tenant_id = ${tenantId} and id = 'a' for no key update`.execute(
          trx,
        ),
      // Successes for both, which end both runs of failures.
      () =>
        recordAttempts(
          store.db,
          ["a", "b"].map((endpointId) => succeeded(deliveryTo(late, endpointId))),
          now,
        ),
      () => disableFailingEndpoints(store.db, 1_800_000, "failing", now),
    );
    assert.equal(recorded.filter(Boolean).length, 2, "both attempts are recorded");
    // The record queued first, so it went first: auto-disable, judging each row again once its
    // lock was granted, finds both runs of failures ended.
    assert.deepEqual(disabled, [], "no endpoint disabled");
    for (const id of ["a", "b"])
      assert.equal((await getEndpoint(store.db, tenantId, id)).status, "enabled", `${id} stays enabled`);
  },
);

test(
  "two Emits naming the same new events in opposite orders end without a deadlock, each event recorded once",
  racing(settings),
  async () => {
    const tenantId = "emit-order";
    await anEndpoint(tenantId, "ep");
    const event = (id: string) => ({ tenantId, id, eventType: "x", dataJson: "{}" });
    // The first Emit records "a", then queues behind the holder's "c"; the second, in the callers'
    // order, would record "b" and queue behind the first's "a", which then needs "b".
    const [first, second] = await raceBehind(
      (trx) =>
        trx
          .insertInto("events")
          .values({ tenant_id: tenantId, id: "c", event_type: "x", data_json: "{}", created_at: now })
          .execute(),
      () => emitEvents(store.db, [event("a"), event("c"), event("b")], now),
      () => emitEvents(store.db, [event("b"), event("a")], now),
    );
    const firstByEvent = new Map(first.map((r) => [r.eventId, r]));
    for (const id of ["a", "b"]) {
      const recorded = firstByEvent.get(id);
      assert.equal(recorded?.duplicate, false, `${id}: recorded by the first Emit`);
      const again = second.find((r) => r.eventId === id);
      assert.equal(again?.duplicate, true, `${id}: a duplicate for the second`);
      assert.deepEqual(again?.deliveries, recorded?.deliveries, `${id}: the same delivery`);
    }
  },
);

test(
  "a resend of a delivered delivery goes ahead while a cancel that names it is still under way",
  racing(settings),
  async () => {
    const tenantId = "final-not-locked";
    const { ids, first, second } = await deliveriesOutOfOrder(tenantId);
    await store.db.updateTable("deliveries").set({ status: "delivered" }).where("id", "=", first).execute();

    // A cancel page naming every delivery, its transaction still open (a DeleteEndpoint midway).
    const cancel = await store.db.startTransaction().execute();
    try {
      const cancelled = await cancelDeliveries(cancel, ids, now);
      assert.ok(cancelled.includes(second) && !cancelled.includes(first), "only pending ones are cancelled");
      const resend = await store.db.transaction().execute(async (trx) => {
        // Waiting for the cancel would end in this error rather than hang the test.
        await sql`set local lock_timeout = '2s'`.execute(trx);
        return reopenDelivery(trx, tenantId, first, now);
      });
      assert.equal(resend?.id, first, "the delivered one is reopened for its resend");
    } finally {
      await cancel.commit().execute();
    }
    assert.equal((await getDelivery(store.db, tenantId, first)).status, "pending");
  },
);
