import assert from "node:assert/strict";
import { test } from "node:test";
import { seeded } from "./seeded-random.js";
import { StartOrder } from "./start-order.js";

test("items come out by start time, however they went in, and only those started by then", () => {
  const random = seeded(5);
  const order = new StartOrder<{ startedAt: number; id: number }>();
  const all = Array.from({ length: 2_000 }, (_, id) => ({ startedAt: Math.floor(random() * 1_000), id }));
  for (const item of all) order.add(item);
  const early = order.takeStartedBy(499);
  assert.ok(early.every((item) => item.startedAt <= 499));
  assert.deepEqual(
    early.map((item) => item.startedAt),
    all
      .map((item) => item.startedAt)
      .filter((t) => t <= 499)
      .sort((a, b) => a - b),
  );
  assert.equal(order.size, all.filter((item) => item.startedAt > 499).length);
  const rest = order.takeStartedBy(Number.POSITIVE_INFINITY);
  assert.equal(rest.length + early.length, all.length);
  assert.equal(new Set([...early, ...rest].map((item) => item.id)).size, all.length);
  assert.equal(order.size, 0);
});
