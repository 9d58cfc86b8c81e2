import assert from "node:assert/strict";
import { test } from "node:test";
import { HooklineMetrics, serveMetrics, statusClassOf } from "./index.js";

test("/metrics serves counters, the backlog read at scrape time and the open streams", async () => {
  let streams = 3;
  const metrics = new HooklineMetrics({
    backlog: async () => [{ queue: "hookline-lane-0", pending: 7, oldestPendingAgeSeconds: 12.5 }],
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
    assert.match(text, /hookline_oldest_pending_age_seconds\{queue="hookline-lane-0"\} 12.5/);
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
