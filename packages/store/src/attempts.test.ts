import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import {
  type AttemptResult,
  cancelDeliveries,
  createEndpoint,
  deleteEndpoint,
  disableFailingEndpoints,
  emitEvent,
  getDelivery,
  getEndpoint,
  getEvent,
  listAttempts,
  type RecordedAttempt,
  recordAttempts,
  reopenDelivery,
  type StoreDb,
} from "./index.js";
import { openTestStore, racing, someoneWaitsForALock } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let store: Awaited<ReturnType<typeof openTestStore>>;
before(async () => {
  store = await openTestStore(settings);
});
after(() => store.close());

const now = new Date();
const result = (
  deliveryId: string,
  attemptNumber: number,
  over: Partial<AttemptResult> = {},
): AttemptResult => ({
  deliveryId,
  attemptNumber,
  url: "https://x.test",
  startedAt: now,
  durationMs: 3,
  responseStatus: 500,
  responseBody: "oops\u0000",
  error: "",
  deliveryStatus: "pending",
  nextAttemptAt: new Date(now.getTime() + 5000),
  ...over,
});

/** Attempt 1 of a delivery, answered 410: the endpoint asks to be disabled. */
const gone = (deliveryId: string): AttemptResult =>
  result(deliveryId, 1, {
    responseStatus: 410,
    deliveryStatus: "cancelled",
    nextAttemptAt: null,
    disableEndpointReason: "410 Gone",
  });

/** A new endpoint taking `eventTypes` (empty: all), and the id of its delivery of a new event. */
async function deliveryTo(
  tenantId: string,
  endpointId: string,
  event: { id: string; type: string },
  eventTypes: string[] = [event.type],
): Promise<string> {
  await createEndpoint(
    store.db,
    { tenantId, id: endpointId, url: "https://x.test", description: "", eventTypes, secret: "s" },
    now,
  );
  const { deliveries } = await emitEvent(
    store.db,
    { tenantId, id: event.id, eventType: event.type, dataJson: "{}" },
    now,
  );
  return deliveries.find((d) => d.endpointId === endpointId)?.id ?? "";
}

test("an attempt recorded twice (a job that ran again) yields one row, and numbers follow the store", async () => {
  const id = await deliveryTo("t", "ep", { id: "e1", type: "x" }, []);
  const [first] = await recordAttempts(store.db, [result(id, 1)], now);
  assert.ok(first);
  const [again, skipped] = await recordAttempts(store.db, [result(id, 1), result(id, 3)], now);
  assert.equal(again, undefined, "attempt 1 is already recorded");
  assert.equal(skipped, undefined, "attempt 3 cannot precede attempt 2");
  const [second] = await recordAttempts(
    store.db,
    [result(id, 2, { responseStatus: 200, deliveryStatus: "delivered", nextAttemptAt: null })],
    now,
  );
  assert.ok(second && BigInt(second.id) > BigInt(first.id));
  const { items } = await listAttempts(store.db, { deliveryId: id }, 10, "");
  assert.deepEqual(
    items.map((a) => [a.attemptNumber, a.responseStatus, a.deliveryStatus]),
    [
      [1, 500, "pending"],
      [2, 200, "delivered"],
    ],
  );
  assert.equal(items[0]?.responseBody, "oops\uFFFD");
  const event = await getEvent(store.db, "t", "e1");
  assert.deepEqual([event.deliveries[0]?.status, event.deliveries[0]?.attemptCount], ["delivered", 2]);
});

test("a batch moves each delivery to its own next attempt time, whatever else the batch holds for it", async () => {
  const first = await deliveryTo("batch", "ep1", { id: "e1", type: "x" }, []);
  const second = await deliveryTo("batch", "ep2", { id: "e2", type: "x" }, []);
  const at = (ms: number) => new Date(now.getTime() + ms);
  const recorded = await recordAttempts(
    store.db,
    [
      // Comes first and names the same delivery: refused (attempt 3 cannot follow none).
      result(first, 3, { nextAttemptAt: at(9000) }),
      result(first, 1, { nextAttemptAt: at(5000) }),
      result(second, 1, { nextAttemptAt: at(7000) }),
    ],
    now,
  );
  assert.deepEqual(
    recorded.map((r) => r?.deliveryStatus),
    [undefined, "pending", "pending"],
  );
  const after = await Promise.all([first, second].map((id) => getDelivery(store.db, "batch", id)));
  assert.deepEqual(
    after.map((d) => [d.status, d.attemptCount, d.nextAttemptAt?.getTime()]),
    [
      ["pending", 1, at(5000).getTime()],
      ["pending", 1, at(7000).getTime()],
    ],
  );
});

test("once reopened by hand, a delivery takes only its manual attempt: a scheduled one still under way is refused", async () => {
  const id = await deliveryTo("hand", "ep", { id: "e", type: "x" });
  // Attempt 1 is under way when the delivery is cancelled (its endpoint was disabled), then
  // reopened by hand: attempt 1 again, this time manual.
  await cancelDeliveries(store.db, [id], now);
  await reopenDelivery(store.db, "hand", id, now);
  const [late] = await recordAttempts(store.db, [result(id, 1)], now);
  assert.equal(late, undefined, "the scheduled attempt's late record");
  const [manual] = await recordAttempts(
    store.db,
    [result(id, 1, { trigger: "manual", deliveryStatus: "failed", nextAttemptAt: null })],
    now,
  );
  assert.ok(manual);
  // Recorded, the mark is gone: the next attempts are scheduled ones again.
  await reopenDelivery(store.db, "hand", id, now);
  const [afterHand] = await recordAttempts(store.db, [result(id, 2, { trigger: "manual" })], now);
  assert.ok(afterHand);
  const [scheduled] = await recordAttempts(store.db, [result(id, 3)], now);
  assert.ok(scheduled, "a scheduled attempt after the manual one is recorded");
});

test("an attempt under way when its delivery was cancelled is logged: a success delivers it, a failure leaves it cancelled", async () => {
  const succeeded = await deliveryTo("late", "ep", { id: "ok", type: "x" });
  const failed = await deliveryTo("late", "ep2", { id: "bad", type: "x" });
  // Both requests were sent; then the endpoint was deleted, cancelling its deliveries.
  await cancelDeliveries(store.db, [succeeded, failed], now);
  const recorded = await recordAttempts(
    store.db,
    [
      result(succeeded, 1, { responseStatus: 200, deliveryStatus: "delivered", nextAttemptAt: null }),
      result(failed, 1),
    ],
    now,
  );
  assert.deepEqual(
    recorded.map((attempt) => attempt?.deliveryStatus),
    ["delivered", "cancelled"],
    "both attempts are logged, and the failed one asks for no retry",
  );
  assert.deepEqual(
    recorded.map((attempt) => attempt?.wasCancelled),
    [true, true],
    "each says it found its delivery cancelled (the metrics counted that cancel already)",
  );
  const after = await Promise.all([succeeded, failed].map((id) => getDelivery(store.db, "late", id)));
  assert.deepEqual(
    after.map((d) => [d.status, d.attemptCount, d.nextAttemptAt]),
    [
      ["delivered", 1, null],
      ["cancelled", 1, null],
    ],
  );
  const { items } = await listAttempts(store.db, { deliveryId: failed }, 10, "");
  assert.deepEqual(
    items.map((a) => a.deliveryStatus),
    ["cancelled"],
    "the attempt says where it left the delivery",
  );
  const [again] = await recordAttempts(store.db, [result(failed, 1)], now);
  assert.equal(again, undefined, "a job that ran again logs nothing more");
});

/**
 * Records `attempt` while another transaction, begun by `change`, holds its delivery's row, and
 * commits that transaction once the record waits for it.
 */
async function recordedDuring(
  change: (tx: StoreDb) => Promise<unknown>,
  attempt: AttemptResult,
): Promise<RecordedAttempt | undefined> {
  const tx = await store.db.startTransaction().execute();
  await change(tx);
  const recording = recordAttempts(store.db, [attempt], now);
  await someoneWaitsForALock(store.db);
  await tx.commit().execute();
  return (await recording)[0];
}

test(
  "a cancel that commits while the attempt's record waits for the row is kept, and no retry is asked for",
  racing(settings),
  async () => {
    const id = await deliveryTo("race", "ep", { id: "e", type: "x" });
    const recorded = await recordedDuring((tx) => cancelDeliveries(tx, [id], now), result(id, 1));
    assert.equal(recorded?.deliveryStatus, "cancelled");
    const delivery = await getDelivery(store.db, "race", id);
    assert.deepEqual(
      [delivery.status, delivery.attemptCount, delivery.nextAttemptAt],
      ["cancelled", 1, null],
    );
    const { items } = await listAttempts(store.db, { deliveryId: id }, 10, "");
    assert.deepEqual(
      items.map((a) => a.deliveryStatus),
      ["cancelled"],
    );
  },
);

test(
  "a reopen by hand that commits while a scheduled attempt's record waits keeps its place",
  racing(settings),
  async () => {
    const id = await deliveryTo("race-hand", "ep", { id: "e", type: "x" });
    await cancelDeliveries(store.db, [id], now);
    const recorded = await recordedDuring((tx) => reopenDelivery(tx, "race-hand", id, now), result(id, 1));
    assert.equal(recorded, undefined, "the scheduled attempt is refused");
    const delivery = await getDelivery(store.db, "race-hand", id);
    assert.deepEqual([delivery.status, delivery.attemptCount], ["pending", 0]);
    const [manual] = await recordAttempts(store.db, [result(id, 1, { trigger: "manual" })], now);
    assert.ok(manual, "the manual attempt is the one recorded");
  },
);

test("a late attempt for a deleted endpoint leaves a new endpoint with its id alone", async () => {
  const id = await deliveryTo("reused", "ep", { id: "e", type: "x" });
  await deleteEndpoint(store.db, "reused", "ep", now);
  await createEndpoint(
    store.db,
    { tenantId: "reused", id: "ep", url: "https://new.test", description: "", eventTypes: [], secret: "s" },
    now,
  );
  await cancelDeliveries(store.db, [id], now);
  const [recorded] = await recordAttempts(store.db, [gone(id)], now);
  assert.ok(recorded, "the old endpoint's attempt is logged");
  const successor = await store.db
    .selectFrom("endpoints")
    .select(["status", "failing_since"])
    .where("tenant_id", "=", "reused")
    .executeTakeFirstOrThrow();
  assert.deepEqual(successor, { status: "enabled", failing_since: null });
});

test("a 410 disables the endpoint with its reason", async () => {
  const id = await deliveryTo("t", "gone", { id: "e2", type: "g" });
  const [recorded] = await recordAttempts(store.db, [gone(id)], now);
  assert.deepEqual(recorded && [recorded.deliveryStatus, recorded.wasCancelled], ["cancelled", false]);
  const endpoint = await getEndpoint(store.db, "t", "gone");
  assert.equal(endpoint.status, "disabled");
  assert.equal(endpoint.disabledReason, "410 Gone");
  assert.equal(
    (await getEndpoint(store.db, "t", "ep")).status,
    "enabled",
    "only the endpoint that answered 410",
  );
});

test("an endpoint's run of failures dates from its first failure, a success ends it, and only failures that span the period disable", async () => {
  const at = (secondsAgo: number) => new Date(now.getTime() - secondsAgo * 1000);
  const stillFailing = await deliveryTo("runs", "still-failing", { id: "sf", type: "sf" });
  const healed = await deliveryTo("runs", "healed", { id: "h", type: "h" });
  // Failed once, 10 minutes ago, and was sent nothing since: its receiver may well be mended.
  const quiet = await deliveryTo("runs", "quiet", { id: "q", type: "q" });
  // Separate batches, as attempts minutes apart are: the second failure keeps the run's start.
  await recordAttempts(
    store.db,
    [
      result(stillFailing, 1, { startedAt: at(600) }),
      result(healed, 1, { startedAt: at(600) }),
      result(quiet, 1, { startedAt: at(600) }),
    ],
    now,
  );
  await recordAttempts(
    store.db,
    [
      result(stillFailing, 2, { startedAt: at(60) }),
      result(healed, 2, {
        startedAt: at(60),
        responseStatus: 200,
        deliveryStatus: "delivered",
        nextAttemptAt: null,
      }),
    ],
    now,
  );
  const disabled = await disableFailingEndpoints(store.db, 300_000, "failing for 5 minutes", now);
  assert.deepEqual(disabled, [{ tenantId: "runs", endpointId: "still-failing" }]);
  assert.equal((await getEndpoint(store.db, "runs", "quiet")).status, "enabled");
  // Tried again and failing still, 10 minutes into its run: now its failures span the period.
  await recordAttempts(store.db, [result(quiet, 2, { startedAt: now })], now);
  assert.deepEqual(await disableFailingEndpoints(store.db, 300_000, "failing for 5 minutes", now), [
    { tenantId: "runs", endpointId: "quiet" },
  ]);
});
