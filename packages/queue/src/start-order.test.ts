import assert from "node:assert/strict";
import { test } from "node:test";
import { seeded } from "./seeded-random.js";
import { StartOrder } from "./start-order.js";

test("items come out by start time, however they went in, and only those started by then", () => {
  const random = seeded(5);
  const order = new StartOrder<{ startedAt: number; id: number }>();
  const all = Array.from({ length: 2_000 }, (_, id) => ({ startedAt: Math.floor(random() * 1_000), id }));
  for (const item of all) order.add(item);
  const early = order.takeStartedBefore(500);
  assert.ok(early.every((item) => item.startedAt <= 499));
  assert.deepEqual(
    early.map((item) => item.startedAt),
    all
      .map((item) => item.startedAt)
      .filter((t) => t <= 499)
      .sort((a, b) => a - b),
  );
  assert.equal(order.size, all.filter((item) => item.startedAt > 499).length);
  const rest = order.takeStartedBefore(Number.POSITIVE_INFINITY);
  assert.equal(rest.length + early.length, all.length);
  assert.equal(new Set([...early, ...rest].map((item) => item.id)).size, all.length);
  assert.equal(order.size, 0);
});

test("adds and takes mixed as the limiter does them match a sorted list, ties included", () => {
  const random = seeded(8);
  const order = new StartOrder<{ startedAt: number }>();
  let reference: number[] = [];
  let now = 0;
  for (let step = 0; step < 4_000; step++) {
    now += Math.floor(random() * 3);
    // Answers arrive out of start order: started up to 50 ms before they come back.
    const startedAt = now - Math.floor(random() * 50);
    order.add({ startedAt });
    reference.push(startedAt);
    if (step % 7 === 0) {
      const before = now - 20;
      const taken = order.takeStartedBefore(before).map((item) => item.startedAt);
      const expected = reference.filter((t) => t < before).sort((a, b) => a - b);
      reference = reference.filter((t) => t >= before);
      assert.deepEqual(taken, expected);
    }
  }
  assert.equal(order.size, reference.length);
});
