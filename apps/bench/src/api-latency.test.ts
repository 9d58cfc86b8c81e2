import assert from "node:assert/strict";
import { test } from "node:test";
import { bucketsOf, quantileBetween } from "./api-latency.js";

const near = (actual: number | undefined, expected: number) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`);

/** Emit's buckets read from a /metrics text holding them (cumulative, by `le`) and another method's. */
const emitBuckets = (counts: [string, number][]) =>
  bucketsOf(
    [
      "# TYPE hookline_rpc_handling_seconds histogram",
      ...counts.map(
        ([le, n]) =>
          `hookline_rpc_handling_seconds_bucket{le="${le}",method="hookline.v1.EmitService/Emit"} ${n}`,
      ),
      `hookline_rpc_handling_seconds_bucket{le="0.01",method="hookline.v1.EmitService/GetEvent"} 999`,
    ].join("\n"),
    "hookline_rpc_handling_seconds",
    "hookline.v1.EmitService/Emit",
  );

test("a quantile is read from the observations between two scrapes, inside its bucket", () => {
  const before = emitBuckets([
    ["0.01", 50],
    ["0.02", 50],
    ["+Inf", 50],
  ]);
  // Since then: 100 calls, 60 under 10 ms, 40 between 10 and 20 ms.
  const after = emitBuckets([
    ["0.01", 110],
    ["0.02", 150],
    ["+Inf", 150],
  ]);
  near(quantileBetween(before, after, 0.5), 50 / 6);
  // The 99th of 100 is 39/40 of the way through the 10–20 ms bucket.
  near(quantileBetween(before, after, 0.99), 10 + (10 * 39) / 40);
  // Another method's series is not read, and nothing new means no figure.
  assert.equal(quantileBetween(after, after, 0.5), undefined);
});

test("a quantile past the largest finite bound has no figure", () => {
  const after = emitBuckets([
    ["0.01", 1],
    ["+Inf", 10],
  ]);
  assert.equal(quantileBetween(new Map(), after, 0.99), undefined);
});

test("an api whose /metrics has no Emit timings is an error, not a missing figure", () => {
  assert.throws(() => quantileBetween(new Map(), emitBuckets([]), 0.5), /no Emit timings/);
});
