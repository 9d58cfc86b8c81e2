import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttemptOutcome } from "@hookline/delivery";
import type { EnqueueItem } from "@hookline/queue";
import { generateSecret } from "@hookline/signing";
import type { AttemptResult, DeliveryWork } from "@hookline/store";
import { type DeliveryDeps, processDelivery } from "./process-delivery.js";

// Fakes of our own interfaces only (store calls, producer, HTTP client): no servers, milliseconds.
const NOW = Date.parse("2026-01-01T00:00:00Z");

const endpoint = {
  url: "https://example.test/hook",
  secret: generateSecret(),
  secretSince: new Date(NOW - 60_000),
  previousSecrets: [],
  status: "enabled" as const,
};

function work(overrides: Partial<DeliveryWork> = {}): DeliveryWork {
  return {
    id: "dlv_1",
    tenantId: "t",
    eventId: "evt_1",
    endpointId: "ep",
    status: "pending",
    attemptCount: 0,
    nextAttemptAt: new Date(NOW),
    nextAttemptManual: false,
    eventType: "order.paid",
    dataJson: "{}",
    eventCreatedAt: new Date(NOW - 1000),
    endpoint,
    ...overrides,
  };
}

function harness(delivery: DeliveryWork | undefined, answer: AttemptOutcome, held = true) {
  const recorded: AttemptResult[] = [];
  const enqueued: EnqueueItem[] = [];
  const cancelled: string[] = [];
  const posted: string[] = [];
  const deps: DeliveryDeps = {
    loadWork: async () => delivery,
    recordAttempt: async (result) => {
      recorded.push(result);
      return { id: "1", deliveryStatus: result.deliveryStatus, wasCancelled: false };
    },
    cancel: async (id) => {
      cancelled.push(id);
    },
    // As a worker with too many writes pending runs them: before the job ends.
    afterAnswer: (writes) => writes(),
    stillHeld: async () => held,
    producer: {
      enqueue: async (items) => {
        enqueued.push(...items);
      },
    },
    http: {
      post: async (request) => {
        posted.push(request.url);
        return answer;
      },
      close: async () => {},
    },
    retry: { scheduleMs: [5000, 60_000], jitter: 0 },
    now: () => NOW,
    random: () => 0.5,
  };
  return { deps, recorded, enqueued, cancelled, posted };
}

const ok: AttemptOutcome = {
  kind: "response",
  status: 200,
  body: "ok",
  retryAfterMs: undefined,
  durationMs: 12,
};
const unavailable: AttemptOutcome = { ...ok, status: 503, body: "busy" };
const gone: AttemptOutcome = { ...ok, status: 410, body: "" };

test("a 2xx records the delivery as delivered and schedules nothing", async () => {
  const h = harness(work(), ok);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.deepEqual(h.posted, ["https://example.test/hook"]);
  assert.equal(h.recorded.length, 1);
  assert.equal(h.recorded[0]?.deliveryStatus, "delivered");
  assert.equal(h.recorded[0]?.attemptNumber, 1);
  assert.equal(h.recorded[0]?.responseStatus, 200);
  assert.equal(h.recorded[0]?.trigger, "scheduled");
  assert.deepEqual(h.enqueued, []);
});

test("a failure schedules the next attempt after the scheduled wait, with the next attempt number", async () => {
  const h = harness(work({ attemptCount: 1 }), unavailable);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 2 });
  assert.equal(h.recorded[0]?.deliveryStatus, "pending");
  assert.equal(h.recorded[0]?.attemptNumber, 2);
  assert.deepEqual(h.recorded[0]?.nextAttemptAt, new Date(NOW + 60_000));
  assert.deepEqual(h.enqueued, [
    { deliveryId: "dlv_1", tenantId: "t", endpointId: "ep", attemptNumber: 3, dueAt: NOW + 60_000 },
  ]);
});

test("the wait runs from the answer: time spent recording the attempt comes out of it", async () => {
  const h = harness(work({ attemptCount: 1 }), unavailable);
  let clock = NOW;
  const record = h.deps.recordAttempt;
  const deps: DeliveryDeps = {
    ...h.deps,
    now: () => clock,
    recordAttempt: async (result) => {
      clock += 40; // a busy store
      return record(result);
    },
  };
  await processDelivery(deps, { deliveryId: "dlv_1", attemptNumber: 2 });
  assert.deepEqual(h.recorded[0]?.nextAttemptAt, new Date(NOW + 60_000));
  assert.equal(h.enqueued[0]?.dueAt, NOW + 60_000);
});

test("a failure with no attempts left fails the delivery", async () => {
  const h = harness(work({ attemptCount: 2 }), unavailable);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 3 });
  assert.equal(h.recorded[0]?.deliveryStatus, "failed");
  assert.equal(h.recorded[0]?.nextAttemptAt, null);
  assert.deepEqual(h.enqueued, []);
});

test("410 Gone cancels the delivery and asks the store to disable the endpoint", async () => {
  const h = harness(work(), gone);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.equal(h.recorded[0]?.deliveryStatus, "cancelled");
  assert.equal(h.recorded[0]?.disableEndpointReason, "the endpoint answered 410 Gone");
  assert.deepEqual(h.enqueued, []);
});

test("a stale job sends nothing and makes sure the due attempt has its job", async () => {
  const h = harness(work({ attemptCount: 2, nextAttemptAt: new Date(NOW + 7000) }), ok);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.deepEqual(h.posted, []);
  assert.deepEqual(h.recorded, []);
  assert.deepEqual(h.enqueued, [
    { deliveryId: "dlv_1", tenantId: "t", endpointId: "ep", attemptNumber: 3, dueAt: NOW + 7000 },
  ]);
});

test("a job ahead of the store, or for a finished delivery, does nothing", async () => {
  for (const [delivery, attemptNumber] of [
    [work(), 2],
    [work({ status: "delivered" }), 1],
    [undefined, 1],
  ] as const) {
    const h = harness(delivery, ok);
    await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber });
    assert.deepEqual([h.posted, h.recorded, h.enqueued, h.cancelled], [[], [], [], []]);
  }
});

test("a job the queue no longer holds sends nothing and records nothing: its replacement will", async () => {
  const h = harness(work({ attemptCount: 1 }), ok, false);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 2 });
  assert.deepEqual([h.posted, h.recorded, h.enqueued, h.cancelled], [[], [], [], []]);
});

test("a manual attempt that fails is one attempt: no retry is scheduled", async () => {
  const h = harness(work({ status: "pending", attemptCount: 3 }), unavailable);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 4, manual: true });
  assert.equal(h.recorded[0]?.trigger, "manual");
  assert.equal(h.recorded[0]?.deliveryStatus, "failed");
  assert.deepEqual(h.enqueued, []);
});

test("a disabled or deleted endpoint cancels the delivery without a request", async () => {
  for (const gone of [{ ...endpoint, status: "disabled" as const }, undefined]) {
    const h = harness(work({ endpoint: gone }), ok);
    await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
    assert.deepEqual(h.posted, []);
    assert.deepEqual(h.cancelled, ["dlv_1"]);
    assert.deepEqual(h.recorded, []);
  }
});

test("an attempt already recorded elsewhere schedules no second retry", async () => {
  const h = harness(work(), unavailable);
  h.deps.recordAttempt = async () => undefined;
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.deepEqual(h.enqueued, []);
});

test("an attempt whose delivery was cancelled while it was under way schedules no retry", async () => {
  const h = harness(work(), unavailable);
  h.deps.recordAttempt = async () => ({ id: "1", deliveryStatus: "cancelled", wasCancelled: true });
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.deepEqual(h.enqueued, []);
});

test("the job ends once the endpoint has answered; recording and the next job follow it", async () => {
  const h = harness(work(), unavailable);
  const deferred: (() => Promise<void>)[] = [];
  h.deps.afterAnswer = async (writes) => {
    deferred.push(writes);
  };
  const outcome = await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.equal(outcome?.kind === "response" && outcome.status, 503);
  assert.deepEqual([h.posted.length, h.recorded.length, h.enqueued.length], [1, 0, 0]);
  await deferred[0]?.();
  assert.equal(h.recorded[0]?.attemptNumber, 1);
  assert.deepEqual(h.enqueued, [
    { deliveryId: "dlv_1", tenantId: "t", endpointId: "ep", attemptNumber: 2, dueAt: NOW + 5000 },
  ]);
});

test("a 410 is recorded before the job ends, so the endpoint's next deliveries find it disabled", async () => {
  const h = harness(work(), gone);
  h.deps.afterAnswer = async () => {
    throw new Error("a 410's writes are not deferred");
  };
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 1 });
  assert.equal(h.recorded[0]?.disableEndpointReason, "the endpoint answered 410 Gone");
});

test("an attempt says how long after it was due it started, by kind, and never less than zero", async () => {
  const started: [string, number][] = [];
  const run = async (delivery: DeliveryWork, job: { attemptNumber: number; manual?: true }) => {
    const { deps } = harness(delivery, ok);
    deps.attemptStarted = (kind, lateMs) => started.push([kind, lateMs]);
    await processDelivery(deps, { deliveryId: delivery.id, ...job });
  };
  // A retry due 250 ms ago, a first attempt due "later" by a clock ahead of ours, a manual one.
  await run(work({ attemptCount: 1, nextAttemptAt: new Date(NOW - 250) }), { attemptNumber: 2 });
  await run(work({ nextAttemptAt: new Date(NOW + 40) }), { attemptNumber: 1 });
  await run(work({ attemptCount: 2, nextAttemptAt: new Date(NOW - 5) }), { attemptNumber: 3, manual: true });
  // Not due (an older job ran late): no request, nothing told.
  await run(work({ attemptCount: 2 }), { attemptNumber: 1 });
  assert.deepEqual(started, [
    ["retry", 250],
    ["first", 0],
    ["manual", 5],
  ]);
});

test("an attempt the store marks as asked for by hand is one attempt, even from a job without the mark", async () => {
  // What the sweeper puts back when a RetryDelivery's job was lost: the job says nothing of it.
  const h = harness(work({ attemptCount: 1, nextAttemptManual: true }), unavailable);
  await processDelivery(h.deps, { deliveryId: "dlv_1", attemptNumber: 2 });
  assert.deepEqual(
    h.recorded.map((r) => [r.attemptNumber, r.trigger, r.deliveryStatus, r.nextAttemptAt]),
    [[2, "manual", "failed", null]],
  );
  assert.deepEqual(h.enqueued, [], "no new retry schedule");
});
