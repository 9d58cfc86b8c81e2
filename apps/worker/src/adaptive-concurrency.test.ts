import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttemptOutcome } from "@hookline/delivery";
import type { QueueLimits } from "@hookline/queue";
import { AdaptiveConcurrency } from "./adaptive-concurrency.js";

// Fakes of our own interfaces only (the queue's limits as a map): no servers.
function harness({ readDelayMs = 0 } = {}) {
  const inQueue = new Map<string, number>();
  const applied: { queue: string; limits: QueueLimits }[] = [];
  const inFlightAcrossProcesses = { value: 0 };
  let clock = 1_000_000;
  const writes: Promise<void>[] = [];
  const adaptive: AdaptiveConcurrency = new AdaptiveConcurrency({
    max: 50,
    now: () => clock,
    readConcurrency: async (queue) => {
      // Read now, answered later: as a round trip to a busy queue backend.
      const value = inQueue.get(queue);
      if (readDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, readDelayMs));
      return value;
    },
    readInFlight: async () => inFlightAcrossProcesses.value,
    writeQueueLimits: async (queue, limits) => {
      inQueue.set(queue, limits.maxInFlight);
    },
    // As the consumer does: it enforces the new limit and writes it through the adaptive writer.
    apply: (queue, limits) => {
      applied.push({ queue, limits });
      writes.push(adaptive.writeQueueLimits(queue, limits));
    },
    isOpen: () => true,
  });
  return {
    adaptive,
    inQueue,
    applied,
    inFlightAcrossProcesses,
    tick: (ms: number) => {
      clock += ms;
    },
    /** Waits for the writes (and reads) the changes so far started. */
    settled: async () => {
      while (writes.length > 0) await writes.shift();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

const ok: AttemptOutcome = {
  kind: "response",
  status: 200,
  body: "",
  retryAfterMs: undefined,
  durationMs: 5,
};

/** One window of an adaptive queue at limit n: n attempts started together, all answered 200. */
async function calmWindow(h: ReturnType<typeof harness>, queue: string, n: number): Promise<void> {
  h.tick(1000);
  await Promise.all(Array.from({ length: n }, () => h.adaptive.track(queue, async () => ok)));
  await h.settled();
}

const tooMany: AttemptOutcome = {
  kind: "response",
  status: 429,
  body: "",
  retryAfterMs: undefined,
  durationMs: 5,
};

test("an endpoint that now sets its own max_in_flight is not overwritten by what the workers learned", async () => {
  const h = harness();
  const learned: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", learned);
  await h.adaptive.writeQueueLimits("q", learned);
  // A 429 cuts a learned limit: the control, so the check below cannot pass by itself.
  h.tick(1000);
  await h.adaptive.track("q", async () => tooMany);
  assert.equal(h.applied.length, 1, "a 429 moves a learned limit");
  assert.ok((h.applied[0]?.limits.maxInFlight ?? 4) < 4);

  // The operator sets max_in_flight 5; the api wrote it into the queue, the next scan resolves it.
  h.inQueue.set("q", 5);
  assert.deepEqual(h.adaptive.resolve("q", { maxInFlight: 5 }), { maxInFlight: 5 });
  h.tick(1000);
  await h.adaptive.track("q", async () => tooMany);
  assert.equal(h.applied.length, 1, "nothing learned is applied any more");
  assert.equal(h.inQueue.get("q"), 5);
  assert.deepEqual(h.adaptive.limits(), [], "and the gauge no longer shows a learned limit for it");
});

test("a rise learned here does not undo a cut another worker process wrote meanwhile; a higher limit it follows", async () => {
  const h = harness();
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits);
  await h.adaptive.writeQueueLimits("q", limits);
  assert.equal(h.inQueue.get("q"), 4);
  // Control: with no other writer, a calm window at 4 in flight doubles the limit (slow start).
  await calmWindow(h, "q", 4);
  assert.equal(h.inQueue.get("q"), 8);

  // Another process got 429s and cut the queue's limit to 2; this one's next window rises.
  h.inQueue.set("q", 2);
  await calmWindow(h, "q", 8);
  assert.equal(h.inQueue.get("q"), 2, "the cut stands");
  assert.equal(h.applied.at(-1)?.limits.maxInFlight, 2, "and this process enforces it too");
  // As a cut of its own: slow start is over, the way back up goes one at a time.
  await calmWindow(h, "q", 2);
  assert.equal(h.inQueue.get("q"), 3);

  // Another process has learned 30; this one's next rise follows it rather than pulling it back.
  h.inQueue.set("q", 30);
  await calmWindow(h, "q", 3);
  assert.equal(h.inQueue.get("q"), 30);
  assert.equal(h.applied.at(-1)?.limits.maxInFlight, 30);
});

test("a worker process holding few of a queue's attempts grows its limit while the others fill it", async () => {
  const h = harness();
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits);
  await h.adaptive.writeQueueLimits("q", limits);
  // One attempt at a time here: alone, that says nothing about 4.
  h.inFlightAcrossProcesses.value = 1;
  for (let i = 0; i < 4; i++) await calmWindow(h, "q", 1);
  assert.equal(h.inQueue.get("q"), 4, "nobody else fills it: it stays");
  // The other processes hold the rest: the queue has 4 in flight across processes. Having found
  // this process alone at the queue, the worker asks again only 30 s later.
  h.inFlightAcrossProcesses.value = 4;
  for (let i = 0; i < 4; i++) await calmWindow(h, "q", 1);
  assert.equal(h.inQueue.get("q"), 4, "not asked again yet");
  h.tick(30_000);
  for (let i = 0; i < 4; i++) await calmWindow(h, "q", 1);
  assert.equal(h.inQueue.get("q"), 8);
});

test("a queue whose endpoint moved to another server starts its limit over; moved on the same server it keeps it", async () => {
  const h = harness();
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits, "https://old.example");
  await h.adaptive.writeQueueLimits("q", limits);
  await calmWindow(h, "q", 4);
  await calmWindow(h, "q", 8);
  assert.equal(h.inQueue.get("q"), 16, "learned of the old server");

  assert.equal(h.adaptive.resolve("q", limits, "https://old.example").maxInFlight, 16);
  // The api wrote the start into the queue as the URL changed; this worker's next scan sees it.
  h.inQueue.set("q", 4);
  const moved = h.adaptive.resolve("q", limits, "https://new.example");
  assert.equal(moved.maxInFlight, 4, "the start, not the old server's 16");
  await h.adaptive.writeQueueLimits("q", moved);
  assert.equal(h.inQueue.get("q"), 4);
  // It learns afresh: slow start doubles again, from 4, and nothing it reads since is a cut.
  await calmWindow(h, "q", 4);
  assert.equal(h.inQueue.get("q"), 8);
  await calmWindow(h, "q", 8);
  assert.equal(h.inQueue.get("q"), 16);
});

test("after a move, a worker whose first write finds the start unchanged takes its first rise as a rise, not a cut", async () => {
  const h = harness();
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits, "https://old.example");
  await h.adaptive.writeQueueLimits("q", limits);
  // A quiet endpoint: it never left the start, so the move changes nothing the consumer writes.
  const moved = h.adaptive.resolve("q", limits, "https://new.example");
  assert.equal(moved.maxInFlight, 4);
  await calmWindow(h, "q", 4);
  assert.deepEqual(
    h.applied.map((a) => a.limits.maxInFlight),
    [8],
  );
  assert.equal(h.inQueue.get("q"), 8);
});

test("after a move, a worker takes a higher limit a peer already learned of the new server", async () => {
  const h = harness();
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits, "https://old.example");
  await h.adaptive.writeQueueLimits("q", limits);
  await calmWindow(h, "q", 4);
  assert.equal(h.inQueue.get("q"), 8);
  // A peer reset first and learned 12 of the new server; this worker's scan comes now.
  h.inQueue.set("q", 12);
  const moved = h.adaptive.resolve("q", limits, "https://new.example");
  await h.adaptive.writeQueueLimits("q", moved);
  assert.equal(h.inQueue.get("q"), 12);
  assert.equal(h.applied.at(-1)?.limits.maxInFlight, 12);
});

test("two writes of one queue under way at once: the later does not take the earlier's rise for another process's cut", async () => {
  const h = harness({ readDelayMs: 5 });
  const limits: QueueLimits = { maxInFlight: 4, adaptive: true };
  h.adaptive.resolve("q", limits);
  await h.adaptive.writeQueueLimits("q", limits);
  // Two windows in a row, the second before the first's write has landed: 4 -> 8 -> 16.
  h.tick(1000);
  await Promise.all(Array.from({ length: 4 }, () => h.adaptive.track("q", async () => ok)));
  h.tick(1000);
  await Promise.all(Array.from({ length: 8 }, () => h.adaptive.track("q", async () => ok)));
  await h.settled();
  assert.deepEqual(
    h.applied.map((a) => a.limits.maxInFlight),
    [8, 16],
  );
  assert.equal(h.inQueue.get("q"), 16);
});
