import assert from "node:assert/strict";
import { test } from "node:test";
import type { EndpointRef, EnqueueItem } from "@hookline/queue";
import type { OverdueDelivery, OverduePosition } from "@hookline/store";
import { type SweeperStore, type SweepWalk, sweepOnce } from "./sweeper.js";

// A fake of our own SweeperStore and producer: no servers, milliseconds.
const NOW = Date.parse("2026-01-01T00:00:00Z");

type Overdue = OverdueDelivery & OverduePosition;

/**
 * overdue: what each pass of a sweep reads (the last one for any pass beyond), kept in (due time,
 * id) order; each read takes the page after its position, as the store does.
 */
function harness(overdue: Overdue[] | Overdue[][], queued: Set<string>, locked = false) {
  const passes = Array.isArray(overdue[0]) ? (overdue as Overdue[][]) : [overdue as Overdue[]];
  const asked: { dueBefore: Date; limit: number; after: OverduePosition | undefined }[] = [];
  const enqueued: EnqueueItem[] = [];
  const store: SweeperStore = {
    exclusively: async (fn) => (locked ? undefined : fn()),
    findOverdue: async (dueBefore, limit, after) => {
      asked.push({ dueBefore, limit, after });
      const rows = passes[Math.min(asked.length, passes.length) - 1] ?? [];
      const later = (row: Overdue) =>
        !after ||
        row.dueAt.getTime() > after.dueAt.getTime() ||
        (row.dueAt.getTime() === after.dueAt.getTime() && row.id > after.id);
      return rows.filter(later).slice(0, limit);
    },
  };
  const producer = {
    hasLiveJob: async (_endpoint: EndpointRef, deliveryId: string, attemptNumber: number) =>
      queued.has(`${deliveryId}#${attemptNumber}`),
    enqueue: async (items: EnqueueItem[]) => {
      enqueued.push(...items);
    },
    unpause: async () => {},
  };
  const walk: SweepWalk = { after: undefined };
  return {
    deps: {
      store,
      producer,
      now: () => NOW,
      graceMs: 30_000,
      batchSize: 10,
      pagesPerSweep: 1,
      walk,
      confirmAfterMs: 0,
    },
    asked,
    enqueued,
  };
}

const delivery = (id: string, attemptCount: number, manual = false, dueAt = NOW - 60_000): Overdue => ({
  id,
  tenantId: "t",
  endpointId: "ep",
  attemptCount,
  manual,
  dueAt: new Date(dueAt),
});

test("the sweeper re-enqueues the due attempt of overdue deliveries that have no job, and only those", async () => {
  const h = harness([delivery("a", 0), delivery("b", 2), delivery("c", 1)], new Set(["b#3"]));
  assert.equal(await sweepOnce(h.deps), 2);
  assert.deepEqual(
    h.asked,
    [1, 2].map(() => ({ dueBefore: new Date(NOW - 30_000), limit: 10, after: undefined })),
    "grace and batch size applied, and read again to confirm",
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

test("a delivery whose attempt is recorded, or gets a job, before the sweep confirms it is left alone", async () => {
  // Between a job's end and its record landing, an answered attempt looks stranded.
  const queued = new Set<string>();
  const h = harness(
    [
      [delivery("a", 0), delivery("b", 0), delivery("c", 0)],
      [delivery("a", 1), delivery("c", 0)], // a's attempt 1 was recorded; b was delivered
    ],
    queued,
  );
  const producer = h.deps.producer;
  let checks = 0;
  h.deps.producer = {
    ...producer,
    hasLiveJob: async (endpoint, id, attemptNumber) => {
      checks += 1;
      if (checks === 4) queued.add("c#1"); // c's job is added between the two passes
      return producer.hasLiveJob(endpoint, id, attemptNumber);
    },
  };
  assert.equal(await sweepOnce(h.deps), 0);
  assert.deepEqual(h.enqueued, []);
});

test("a delivery whose due attempt was asked for by hand is put back as such", async () => {
  const h = harness([delivery("m", 1, true)], new Set());
  assert.equal(await sweepOnce(h.deps), 1);
  assert.deepEqual(h.enqueued, [
    { deliveryId: "m", tenantId: "t", endpointId: "ep", attemptNumber: 2, manual: true },
  ]);
});

test("overdue deliveries that have jobs do not hide a stranded one behind them: each sweep goes on where the last stopped", async () => {
  // 25 deliveries held back behind their endpoint's limits (they have jobs), then one that lost its
  // job; a sweep checks 10.
  const backlog = Array.from({ length: 25 }, (_, n) => delivery(`a${String(n).padStart(2, "0")}`, 0));
  const stranded = delivery("z", 0, false, NOW - 40_000);
  const h = harness([...backlog, stranded], new Set(backlog.map((d) => `${d.id}#1`)));
  assert.deepEqual([await sweepOnce(h.deps), await sweepOnce(h.deps), await sweepOnce(h.deps)], [0, 0, 1]);
  assert.deepEqual(
    h.enqueued.map((item) => item.deliveryId),
    ["z"],
  );
  // The third page was short: the walk starts over.
  assert.equal(h.deps.walk.after, undefined);
  assert.deepEqual(
    h.asked.map((ask) => ask.after?.id),
    [undefined, "a09", "a19", "a19"],
    "each sweep starts after the last page; the confirming read rereads its own page",
  );
});

test("one sweep reads page after page up to its bound, and confirms over the same pages", async () => {
  const backlog = Array.from({ length: 25 }, (_, n) => delivery(`a${String(n).padStart(2, "0")}`, 0));
  const h = harness([...backlog, delivery("z", 0, false, NOW - 40_000)], new Set(["a03#1"]));
  h.deps.pagesPerSweep = 2;
  assert.equal(await sweepOnce(h.deps), 19, "the first 20 but a03, which has its job");
  assert.deepEqual(
    h.asked.map((ask) => ask.after?.id),
    [undefined, "a09", undefined, "a09"],
  );
  assert.equal(h.deps.walk.after?.id, "a19");
  assert.equal(await sweepOnce(h.deps), 6, "the rest, and the walk starts over");
  assert.equal(h.deps.walk.after, undefined);
});

test("a sweep whose re-enqueue fails leaves the walk where it was, so the next goes over the same page", async () => {
  const backlog = Array.from({ length: 12 }, (_, n) => delivery(`a${String(n).padStart(2, "0")}`, 0));
  const h = harness(backlog, new Set());
  const enqueue = h.deps.producer.enqueue;
  h.deps.producer = {
    ...h.deps.producer,
    enqueue: async () => {
      throw new Error("Redis is down");
    },
  };
  await assert.rejects(sweepOnce(h.deps), /Redis is down/);
  assert.equal(h.deps.walk.after, undefined);
  h.deps.producer = { ...h.deps.producer, enqueue };
  assert.equal(await sweepOnce(h.deps), 10, "the first page, again");
  const walk: SweepWalk = h.deps.walk; // assert.equal narrowed the field to undefined above
  assert.equal(walk.after?.id, "a09");
});

test("a backlog falling due faster than sweeps read it does not keep the walk from coming back to the start", async () => {
  // One hot endpoint's backlog: a delivery falls due every 2 ms (500/s), each with its job, more
  // than a sweep's 5,000 reads in 15 s. Before it, one delivery whose job is lost once the walk
  // has passed it.
  let now = NOW;
  const stranded = delivery("x", 2, false, NOW - 3_600_000);
  const backlogFrom = NOW - 60_000;
  const store: SweeperStore = {
    exclusively: async (fn) => fn(),
    findOverdue: async (dueBefore, limit, after) => {
      const rows: Overdue[] = [];
      if (!after || stranded.dueAt > after.dueAt) rows.push(stranded);
      let t = after && after.dueAt.getTime() >= backlogFrom ? after.dueAt.getTime() + 2 : backlogFrom;
      for (; t < dueBefore.getTime() && rows.length < limit; t += 2)
        rows.push(delivery(`b${t}`, 0, false, t));
      return rows;
    },
  };
  let strandedHasJob = true;
  const enqueued: EnqueueItem[] = [];
  const deps = {
    store,
    producer: {
      hasLiveJob: async (_endpoint: EndpointRef, id: string) => (id === "x" ? strandedHasJob : true),
      enqueue: async (items: EnqueueItem[]) => void enqueued.push(...items),
      unpause: async () => {},
    },
    now: () => now,
    graceMs: 30_000,
    batchSize: 500,
    pagesPerSweep: 10,
    walk: { after: undefined } as SweepWalk,
    confirmAfterMs: 0,
  };
  await sweepOnce(deps);
  strandedHasJob = false;
  let sweeps = 0;
  while (!enqueued.some((item) => item.deliveryId === "x") && sweeps < 120) {
    now += 15_000;
    sweeps += 1;
    await sweepOnce(deps);
  }
  assert.deepEqual(
    enqueued.map((item) => item.deliveryId),
    ["x"],
    `x put back within 30 minutes of sweeps (the walk is at ${deps.walk.after?.dueAt.toISOString()})`,
  );
  // The first lap held x and 15,000 of the backlog: it ends in the fourth sweep (a short page), and
  // the next lap starts with x.
  assert.ok(sweeps <= 4, `put back after ${sweeps} sweeps`);
});

test("a delivery whose answered attempt this process is still recording is not put back", async () => {
  const h = harness([delivery("a", 0), delivery("b", 0)], new Set());
  h.deps = { ...h.deps, recording: (id: string) => id === "a" } as typeof h.deps;
  assert.equal(await sweepOnce(h.deps), 1);
  assert.deepEqual(
    h.enqueued.map((item) => item.deliveryId),
    ["b"],
  );
});
