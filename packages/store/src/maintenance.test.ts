import assert from "node:assert/strict";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import {
  cancelDeliveries,
  createEndpoint,
  emitEvent,
  getDelivery,
  listAttempts,
  purgeOlderThan,
  recordAttempts,
  reopenDelivery,
} from "./index.js";
import { racing, someoneWaitsForALock, storeForThisFile } from "./test-helpers.js";

const settings = readTestSettings(process.env);

const store = storeForThisFile(settings);

const longAgo = new Date(Date.now() - 2 * 86_400_000);
const now = new Date();
/** Retention's window: a day, so longAgo is out of it and now in it. */
const cutoff = new Date(now.getTime() - 86_400_000);

/** The delivery of an event emitted two days ago to a new endpoint of the tenant. */
async function deliveryOfAnOldEvent(tenantId: string): Promise<string> {
  await createEndpoint(
    store.db,
    { tenantId, id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
    longAgo,
  );
  const { deliveries } = await emitEvent(
    store.db,
    { tenantId, id: "old", eventType: "x", dataJson: "{}" },
    longAgo,
  );
  return deliveries[0]?.id ?? "";
}

test(
  "a delivery resent while retention's purge waits for its row is kept, with its attempts",
  racing(settings),
  async () => {
    const id = await deliveryOfAnOldEvent("t");
    const delivered = { url: "https://x.test", durationMs: 1, responseBody: "", error: "" };
    await recordAttempts(
      store.db,
      [
        {
          ...delivered,
          deliveryId: id,
          attemptNumber: 1,
          startedAt: longAgo,
          responseStatus: 200,
          deliveryStatus: "delivered",
          nextAttemptAt: null,
        },
      ],
      longAgo,
    );

    // RetryDelivery's reopen holds the row; the purge has read it as delivered and waits for it.
    const tx = await store.db.startTransaction().execute();
    assert.ok(await reopenDelivery(tx, "t", id, now));
    const purging = purgeOlderThan(store.db, cutoff);
    await someoneWaitsForALock(store.db);
    await tx.commit().execute();
    await purging;

    const kept = await getDelivery(store.db, "t", id);
    assert.equal(kept.status, "pending", "the resend the call answered for still happens");
    const [second] = await recordAttempts(
      store.db,
      [
        {
          ...delivered,
          deliveryId: id,
          attemptNumber: 2,
          trigger: "manual",
          startedAt: now,
          responseStatus: 200,
          deliveryStatus: "delivered",
          nextAttemptAt: null,
        },
      ],
      now,
    );
    assert.ok(second, "its attempt is recorded");
  },
);

test(
  "an attempt recorded while retention's purge waits for its delivery goes with the delivery",
  racing(settings),
  async () => {
    const id = await deliveryOfAnOldEvent("u");
    await cancelDeliveries(store.db, [id], longAgo);

    // An attempt under way when the delivery was cancelled is logged, holding the row meanwhile.
    const tx = await store.db.startTransaction().execute();
    const [late] = await recordAttempts(
      tx,
      [
        {
          deliveryId: id,
          attemptNumber: 1,
          url: "https://x.test",
          startedAt: now,
          durationMs: 1,
          responseStatus: 500,
          responseBody: "",
          error: "",
          deliveryStatus: "pending",
          nextAttemptAt: null,
        },
      ],
      now,
    );
    assert.ok(late, "the late attempt is logged");
    const purging = purgeOlderThan(store.db, cutoff);
    await someoneWaitsForALock(store.db);
    await tx.commit().execute();
    await purging;

    await assert.rejects(getDelivery(store.db, "u", id), /not found/);
    const { items } = await listAttempts(store.db, { tenantId: "u" }, 10, "");
    assert.deepEqual(items, [], "no attempt outlives its delivery");
  },
);
