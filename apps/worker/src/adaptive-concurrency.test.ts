import assert from "node:assert/strict";
import { test } from "node:test";
import type { AttemptOutcome } from "@hookline/delivery";
import type { QueueLimits } from "@hookline/queue";
import { AdaptiveConcurrency } from "./adaptive-concurrency.js";

// Fakes of our own interfaces only (the queue's limits as a map): no servers.
function harness() {
  const inQueue = new Map<string, number>();
  const applied: { queue: string; limits: QueueLimits }[] = [];
  let clock = 1_000_000;
  const adaptive = new AdaptiveConcurrency({
    max: 50,
    now: () => clock,
    readConcurrency: async (queue) => inQueue.get(queue),
    writeQueueLimits: async (queue, limits) => {
      inQueue.set(queue, limits.maxInFlight);
    },
    apply: (queue, limits) => applied.push({ queue, limits }),
    isOpen: () => true,
  });
  return {
    adaptive,
    inQueue,
    applied,
    tick: (ms: number) => {
      clock += ms;
    },
  };
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
