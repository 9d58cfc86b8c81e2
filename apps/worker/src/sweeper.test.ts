import assert from "node:assert/strict";
import { test } from "node:test";
import type { EndpointRef, EnqueueItem } from "@hookline/queue";
import type { OverdueDelivery } from "@hookline/store";
import { type SweeperStore, sweepOnce } from "./sweeper.js";

// A fake of our own SweeperStore and producer: no servers, milliseconds.
const NOW = Date.parse("2026-01-01T00:00:00Z");

function harness(overdue: OverdueDelivery[], queued: Set<string>, locked = false) {
  const asked: { dueBefore: Date; limit: number }[] = [];
  const enqueued: EnqueueItem[] = [];
  const store: SweeperStore = {
    exclusively: async (fn) => (locked ? undefined : fn()),
    findOverdue: async (dueBefore, limit) => {
      asked.push({ dueBefore, limit });
      return overdue;
    },
  };
  const producer = {
    hasJob: async (_endpoint: EndpointRef, deliveryId: string, attemptNumber: number) =>
      queued.has(`${deliveryId}#${attemptNumber}`),
    enqueue: async (items: EnqueueItem[]) => {
      enqueued.push(...items);
    },
  };
  return { deps: { store, producer, now: () => NOW, graceMs: 30_000, batchSize: 10 }, asked, enqueued };
}

const delivery = (id: string, attemptCount: number): OverdueDelivery => ({
  id,
  tenantId: "t",
  endpointId: "ep",
  attemptCount,
});

test("the sweeper re-enqueues the due attempt of overdue deliveries that have no job, and only those", async () => {
  const h = harness([delivery("a", 0), delivery("b", 2), delivery("c", 1)], new Set(["b#3"]));
  assert.equal(await sweepOnce(h.deps), 2);
  assert.deepEqual(
    h.asked,
    [{ dueBefore: new Date(NOW - 30_000), limit: 10 }],
    "grace and batch size applied",
  );
  assert.deepEqual(h.enqueued, [
    { deliveryId: "a", tenantId: "t", endpointId: "ep", attemptNumber: 1 },
    { deliveryId: "c", tenantId: "t", endpointId: "ep", attemptNumber: 2 },
  ]);
});

test("a job for an older attempt does not count: the due attempt is enqueued", async () => {
  const h = harness([delivery("a", 1)], new Set(["a#1"]));
  assert.equal(await sweepOnce(h.deps), 1);
  assert.equal(h.enqueued[0]?.attemptNumber, 2);
});

test("while another process sweeps, this one reads nothing and answers undefined", async () => {
  const h = harness([delivery("a", 0)], new Set(), true);
  assert.equal(await sweepOnce(h.deps), undefined);
  assert.deepEqual(h.asked, []);
  assert.deepEqual(h.enqueued, []);
});
