import assert from "node:assert/strict";
import { after, before, test } from "node:test";
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
import { openTestStore, someoneWaitsForALock } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

test("a delivery resent while retention's purge waits for its row is kept, with its attempts", {
  skip: settings.kind === "embedded" && "one embedded session runs one transaction at a time: no race",
}, async () => {
  const longAgo = new Date(Date.now() - 2 * 86_400_000);
  const now = new Date();
  await createEndpoint(
    store.db,
    { tenantId: "t", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
    longAgo,
  );
  const { deliveries } = await emitEvent(
    store.db,
    { tenantId: "t", id: "old", eventType: "x", dataJson: "{}" },
    longAgo,
  );
  const id = deliveries[0]?.id ?? "";
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
  const purging = purgeOlderThan(store.db, new Date(now.getTime() - 86_400_000));
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
});

test("an attempt recorded while retention's purge waits for its delivery goes with the delivery", {
  skip: settings.kind === "embedded" && "one embedded session runs one transaction at a time: no race",
}, async () => {
  const longAgo = new Date(Date.now() - 2 * 86_400_000);
  const now = new Date();
  await createEndpoint(
    store.db,
    { tenantId: "u", id: "ep", url: "https://x.test", description: "", eventTypes: [], secret: "s" },
    longAgo,
  );
  const { deliveries } = await emitEvent(
    store.db,
    { tenantId: "u", id: "old", eventType: "x", dataJson: "{}" },
    longAgo,
  );
  const id = deliveries[0]?.id ?? "";
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
  const purging = purgeOlderThan(store.db, new Date(now.getTime() - 86_400_000));
  await someoneWaitsForALock(store.db);
  await tx.commit().execute();
  await purging;

  await assert.rejects(getDelivery(store.db, "u", id), /not found/);
  const { items } = await listAttempts(store.db, { tenantId: "u" }, 10, "");
  assert.deepEqual(items, [], "no attempt outlives its delivery");
});
