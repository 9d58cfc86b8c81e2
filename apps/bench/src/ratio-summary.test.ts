import assert from "node:assert/strict";
import { test } from "node:test";
import { median, ratioSummaryLines } from "./ratio-summary.js";
import type { ComparedPair } from "./sections-report.js";
import { pairOrder } from "./throughput-rounds.js";

const run = (label: string, perSecond: number) => ({
  label,
  deliveries: perSecond * 10,
  seconds: 10,
  cpu: new Map<string, number>(),
});

const ceiling = { requests: 20_000, seconds: 1, perSecond: 20_000 };

test("the reference goes first in odd rounds, Hookline in even ones", () => {
  assert.deepEqual(pairOrder(1), ["reference", "hookline"]);
  assert.deepEqual(pairOrder(2), ["hookline", "reference"]);
  assert.deepEqual(pairOrder(3), ["reference", "hookline"]);
});

test("median of odd and even counts", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.ok(Number.isNaN(median([])));
});

test("each backend's ratios to the reference are summed up as median and range, once there are two", () => {
  const pairs: ComparedPair[] = [
    {
      round: 1,
      ceiling,
      reference: run("reference, BullMQ on Redis", 1000),
      hookline: run("hookline servers", 1500),
    },
    {
      round: 1,
      ceiling,
      reference: run("reference, BullMQ on PostgreSQL", 500),
      hookline: run("hookline embedded", 600),
    },
    {
      round: 2,
      ceiling,
      reference: run("reference, BullMQ on Redis", 1000),
      hookline: run("hookline servers", 1200),
    },
    {
      round: 3,
      ceiling,
      reference: run("reference, BullMQ on Redis", 1000),
      hookline: run("hookline servers", 1300),
    },
  ];
  assert.deepEqual(ratioSummaryLines(pairs), [
    "hookline servers ÷ reference, BullMQ on Redis: median 1.30, range 1.20–1.50 over 3 rounds",
  ]);
});
