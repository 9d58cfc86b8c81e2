import assert from "node:assert/strict";
import { test } from "node:test";
import { endpointCap, FAST_ENV, type OwnServers, servers, startOwnServers } from "./backend.js";
import { killAt, runCluster } from "./cluster.js";
import { assertLedgerHolds } from "./run.js";
import { until } from "./stream.js";

const CAP = endpointCap(FAST_ENV);
const EVENTS = 500;

test("three workers compete for the same queues; one is killed mid-request, two carry on", {
  skip: !servers && "needs several worker processes on one PostgreSQL (the embedded store is one process)",
}, async () => {
  const own: OwnServers = await startOwnServers();
  try {
    const { run, verdict } = await runCluster({
      scenario: "2. 3 workers, 1 SIGKILLed",
      own,
      workers: 3,
      events: EVENTS,
      perSecond: 40,
      behaviour: () => ({ kind: "answer", status: 200, delayMs: 2 + Math.floor(Math.random() * 10) }),
      async inject(run) {
        // Early, so the wait for BullMQ to find the dead worker's jobs stalled overlaps the stream.
        await until("10% of the events acked", () => run.stream.acked.size >= EVENTS * 0.1, 60_000);
        await until("a request in flight", () => run.receiver.inFlight() > 0, 30_000);
        const [victim] = run.workers.splice(0, 1);
        if (victim) await killAt(run, victim, "worker SIGKILL");
      },
    });
    assertLedgerHolds(verdict);
    assert.deepEqual(run.exitedBeforeTeardown, [], "the two survivors kept running");
    for (const [endpoint, max] of run.receiver.maxInFlight)
      assert.ok(max <= CAP, `${endpoint} had ${max} requests in flight; the cap across workers is ${CAP}`);
  } finally {
    await own.dispose();
  }
});
