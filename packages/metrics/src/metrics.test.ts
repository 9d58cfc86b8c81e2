import assert from "node:assert/strict";
import { test } from "node:test";
import {
  BACKLOG_READ_BUDGET_MS,
  BACKLOG_READ_EVERY_MS,
  HooklineMetrics,
  NAMED_QUEUES,
  type QueueBacklog,
  serveMetrics,
  statusClassOf,
} from "./index.js";

test("/metrics serves counters, the backlog read at scrape time and the open streams", async () => {
  let streams = 3;
  const metrics = new HooklineMetrics({
    backlog: {
      read: async () => [{ queue: "hookline-lane-0", pending: 7, oldestDueAt: Date.now() - 12_500 }],
    },
    openStreams: () => streams,
  });
  metrics.attempts.inc({ status_class: statusClassOf(503) });
  metrics.deliveries.inc({ outcome: "delivered" });
  metrics.attemptDuration.observe(0.2);
  const server = await serveMetrics(metrics.registry, { host: "127.0.0.1", port: 0 });
  try {
    const scrape = async () => (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    const text = await scrape();
    assert.match(text, /hookline_attempts_total\{status_class="5xx"\} 1/);
    assert.match(text, /hookline_deliveries_total\{outcome="delivered"\} 1/);
    assert.match(text, /hookline_queue_depth\{queue="hookline-lane-0"\} 7/);
    assert.match(text, /hookline_oldest_pending_age_seconds\{queue="hookline-lane-0"\} 12\.5/);
    assert.match(text, /hookline_deliveries_pending 7/);
    assert.match(text, /hookline_backlog_read_ok 1/);
    assert.match(text, /hookline_watch_streams_open 3/);
    assert.match(text, /hookline_attempt_duration_seconds_bucket\{le="0.25"\} 1/);
    streams = 0;
    assert.match(await scrape(), /hookline_watch_streams_open 0/);
    assert.equal((await fetch(`http://127.0.0.1:${server.port}/other`)).status, 404);
  } finally {
    await server.close();
  }
  assert.equal(statusClassOf(0), "no_response");
});

test("the backlog names only the deepest and the longest-waiting queues; the total counts them all", async () => {
  // 100 queues: queue i has i pending, and the lower the i the older its oldest delivery.
  const at = 1_000_000;
  const rows: QueueBacklog[] = Array.from({ length: 100 }, (_, i) => ({
    queue: `q${i}`,
    pending: i,
    oldestDueAt: at - (1000 - i) * 1000,
  }));
  const metrics = new HooklineMetrics({ backlog: { read: async () => rows, now: () => at } });
  const text = await metrics.registry.metrics();
  const named = (metric: string) =>
    [...text.matchAll(new RegExp(`^${metric}\\{queue="(q\\d+)"\\}`, "gm"))].map((m) => m[1]).sort();
  assert.deepEqual(
    named("hookline_queue_depth"),
    rows
      .slice(-NAMED_QUEUES)
      .map((r) => r.queue)
      .sort(),
  );
  assert.deepEqual(
    named("hookline_oldest_pending_age_seconds"),
    rows
      .slice(0, NAMED_QUEUES)
      .map((r) => r.queue)
      .sort(),
  );
  assert.match(text, /^hookline_oldest_pending_age_seconds\{queue="q0"\} 1000$/m);
  assert.match(text, new RegExp(`^hookline_deliveries_pending ${(99 * 100) / 2}$`, "m"));
});

test("a backlog read serves the scrapes of its next 15 s; a failed one keeps the last shown, and says it failed", async () => {
  let clock = 0;
  let reads = 0;
  let fail = false;
  const errors: string[] = [];
  const metrics = new HooklineMetrics({
    backlog: {
      read: async () => {
        reads += 1;
        if (fail) throw new Error("the store is away");
        return [{ queue: "q", pending: reads, oldestDueAt: 0 }];
      },
      onError: (error) => errors.push(error.message),
      now: () => clock,
    },
  });
  metrics.deliveries.inc({ outcome: "delivered" });
  assert.match(await metrics.registry.metrics(), /hookline_queue_depth\{queue="q"\} 1/);
  clock += BACKLOG_READ_EVERY_MS - 1;
  const again = await metrics.registry.metrics();
  assert.match(again, /hookline_queue_depth\{queue="q"\} 1/);
  assert.match(again, /hookline_backlog_age_seconds 14\.999/);
  assert.equal(reads, 1, "one read for both scrapes, and for every gauge of each");
  clock += 1;
  fail = true;
  const text = await metrics.registry.metrics();
  assert.equal(reads, 2);
  assert.match(text, /hookline_queue_depth\{queue="q"\} 1/, "the last read is still shown");
  assert.match(text, /hookline_backlog_age_seconds 15$/m);
  assert.match(text, /hookline_backlog_read_ok 0/);
  assert.match(text, /hookline_deliveries_total\{outcome="delivered"\} 1/);
  assert.deepEqual(errors, ["the store is away"]);
});

test("a read slower than the budget: the scrape shows the last one on time; once the store is known slow, scrapes no longer wait", async () => {
  let clock = 0;
  const held: ((rows: QueueBacklog[]) => void)[] = [];
  const errors: string[] = [];
  let reads = 0;
  const metrics = new HooklineMetrics({
    backlog: {
      // The first read answers at once; every later one waits to be released.
      read: () =>
        ++reads === 1
          ? Promise.resolve([{ queue: "q", pending: 1, oldestDueAt: 0 }])
          : new Promise((resolve) => held.push(resolve)),
      onError: (error) => errors.push(error.message),
      now: () => clock,
    },
  });
  assert.match(await metrics.registry.metrics(), /hookline_queue_depth\{queue="q"\} 1/);
  clock += BACKLOG_READ_EVERY_MS;
  const startedAt = Date.now();
  const late = await metrics.registry.metrics();
  assert.ok(Date.now() - startedAt < BACKLOG_READ_BUDGET_MS * 2, "on time: the budget, not the read");
  assert.match(late, /hookline_queue_depth\{queue="q"\} 1/, "the last read");
  assert.match(late, /hookline_backlog_age_seconds 15$/m);
  assert.match(late, /hookline_backlog_read_ok 1$/m, "a read under way has not failed");
  // It lands 5 s after it began: the next scrape takes it, and the store is known slow.
  clock += 5_000;
  held[0]?.([{ queue: "q", pending: 2, oldestDueAt: 0 }]);
  await new Promise((resolve) => setImmediate(resolve));
  assert.match(await metrics.registry.metrics(), /hookline_queue_depth\{queue="q"\} 2/);
  clock += BACKLOG_READ_EVERY_MS;
  const quick = Date.now();
  const next = await metrics.registry.metrics();
  assert.ok(Date.now() - quick < BACKLOG_READ_BUDGET_MS / 2, "a scrape no longer waits for a slow store");
  assert.match(next, /hookline_queue_depth\{queue="q"\} 2/);
  assert.equal(reads, 3, "yet it started the next read");
  assert.deepEqual(errors, [
    `no backlog read within ${BACKLOG_READ_BUDGET_MS} ms; the last one is shown`,
    "the backlog read took 5000 ms; scrapes show the last one meanwhile",
  ]);
});

test("before any read has succeeded, the total is NaN, not a 0 that reads as an empty backlog", async () => {
  const metrics = new HooklineMetrics({
    backlog: {
      read: async () => {
        throw new Error("the store is away");
      },
    },
  });
  const text = await metrics.registry.metrics();
  // prom-client writes "Nan"; Prometheus parses NaN in any case.
  assert.match(text, /^hookline_deliveries_pending NaN$/im);
  assert.match(text, /^hookline_backlog_age_seconds NaN$/im);
  assert.match(text, /hookline_backlog_read_ok 0/);
  assert.doesNotMatch(text, /hookline_queue_depth\{/);
});
