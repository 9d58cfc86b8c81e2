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

test("a backlog read slower than the budget leaves the scrape on time, and serves the scrapes after it", async () => {
  let release: (rows: QueueBacklog[]) => void = () => {};
  const slow = new Promise<QueueBacklog[]>((resolve) => (release = resolve));
  let reads = 0;
  const errors: string[] = [];
  const metrics = new HooklineMetrics({
    backlog: {
      // The first read hangs until released; a later one would answer at once, with nothing.
      read: async () => (++reads === 1 ? slow : []),
      onError: (error) => errors.push(error.message),
      everyMs: 60_000,
    },
  });
  const server = await serveMetrics(metrics.registry, { host: "127.0.0.1", port: 0 });
  try {
    const startedAt = Date.now();
    const answer = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    assert.equal(answer.status, 200);
    const first = await answer.text();
    assert.ok(Date.now() - startedAt < BACKLOG_READ_BUDGET_MS * 2, "answered after the budget, not the read");
    // prom-client writes "Nan"; Prometheus parses NaN in any case.
    assert.match(first, /^hookline_deliveries_pending NaN$/im, "unknown, not 0");
    assert.doesNotMatch(first, /hookline_queue_depth\{/);
    assert.deepEqual(errors, [`no backlog read within ${BACKLOG_READ_BUDGET_MS} ms; the last one is shown`]);
    // The read ends after all: the next scrape shows it.
    release([{ queue: "q", pending: 3, oldestDueAt: Date.now() }]);
    await new Promise((resolve) => setImmediate(resolve));
    const next = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    assert.match(next, /hookline_queue_depth\{queue="q"\} 3/, "the slow read, not a new one");
    assert.equal(reads, 1);
    assert.match(next, /hookline_backlog_read_ok 1/);
  } finally {
    await server.close();
  }
});
