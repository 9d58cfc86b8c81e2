import assert from "node:assert/strict";
import { test } from "node:test";
import {
  endpointCap,
  FAST_ENV,
  FIXED_CONCURRENCY,
  type OwnServers,
  servers,
  startOwnServers,
} from "./backend.js";
import { ENDPOINTS, runCluster, stopWithin } from "./cluster.js";
import { assertLedgerHolds } from "./run.js";
import { trace, until } from "./stream.js";

const EVENTS = 500;
const CAP = endpointCap({ ...FAST_ENV, ...FIXED_CONCURRENCY });

test("Redis restarted empty mid-run: the sweeper rebuilds the queues, workers reconnect alone, one stopped meanwhile exits", {
  skip: !servers && "the embedded default has no Redis",
}, async () => {
  const own: OwnServers = await startOwnServers();
  let before = new Map<string, number>();
  let waiting = 0;
  let stoppedCleanly = false;
  let stoppedLog: string[] = [];
  try {
    const { run, verdict } = await runCluster({
      scenario: "3. Redis restarted empty",
      own,
      workers: 2,
      events: EVENTS,
      perSecond: 40,
      env: FIXED_CONCURRENCY,
      // Retries waiting as delayed jobs, and a slow endpoint (ep3) with a backlog of waiting ones:
      // what a Redis that comes back empty has lost, and only the sweeper can put back.
      behaviour: (_event, endpoint, nth) =>
        nth === 1 && Math.random() < 0.25
          ? { kind: "answer", status: 503, delayMs: 0 }
          : {
              kind: "answer",
              status: 200,
              delayMs: endpoint === "ep3" ? 300 : 20 + Math.floor(Math.random() * 80),
            },
      async inject(run) {
        await until("40% of the events acked", () => run.stream.acked.size >= EVENTS * 0.4, 60_000);
        const start = Date.now();
        // Deliveries owed but not yet requested: their jobs wait in the Redis about to be lost.
        waiting = run.stream.acked.size * ENDPOINTS - new Set(run.receiver.receipts.map((r) => r.key)).size;
        trace(`redis down: ${run.stream.acked.size} acked, ${waiting} deliveries waiting in the queue`);
        // A worker told to stop while Redis is down exits (BullMQ alone closed it for good).
        const stopping = run.workers[0] ?? assert.fail("the run has workers");
        let stopped: Promise<boolean> | undefined;
        await own.redis.restartEmpty(2000, () => {
          stopped = stopWithin(stopping, 15_000);
        });
        run.faults.push({ kind: "Redis restarted empty", start, end: Date.now() });
        // From here on the per-endpoint cap must hold again, across the workers.
        before = new Map(run.receiver.maxInFlight);
        run.receiver.resetMaxInFlight();
        stoppedCleanly = (await stopped) ?? false;
        run.faults.push({ kind: "worker stopped while Redis was down", start, end: Date.now() });
        stoppedLog = stopping.log;
        run.workers[0] = await run.startWorker();
      },
    });
    const logs = [...stoppedLog, ...run.workers.flatMap((w) => w.log)];
    const notHeld = logs.filter((line) => line.includes("no longer held"));
    trace(`jobs fetched before the restart that sent nothing: ${notHeld.length}`);
    assertLedgerHolds(verdict);
    assert.ok(waiting > 20, `the restart lost queued jobs (${waiting} deliveries were waiting)`);
    assert.ok(stoppedCleanly, "a worker stopped while Redis was down exited within 15 s of SIGTERM");
    assert.deepEqual(run.exitedBeforeTeardown, [], "no process died");
    for (const [endpoint, max] of before)
      assert.ok(
        max <= CAP,
        `before the restart ${endpoint} had ${max} requests in flight; the cap is ${CAP}`,
      );
    const after = run.receiver.maxInFlight;
    // The cap is back before the jobs are: it holds across both workers after the restart.
    for (const [endpoint, max] of after)
      assert.ok(max <= CAP, `after the restart ${endpoint} had ${max} requests in flight; the cap is ${CAP}`);
  } finally {
    await own.dispose();
  }
});
