import assert from "node:assert/strict";
import { test } from "node:test";
import { Batcher } from "./index.js";

test("calls made while a batch is in flight share the next batch, in order", async () => {
  const batches: number[][] = [];
  const batcher = new Batcher<number, number>(async (items) => {
    batches.push(items);
    await new Promise((resolve) => setImmediate(resolve));
    return items.map((n) => n * 10);
  }, 3);
  const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => batcher.add(n)));
  assert.deepEqual(results, [10, 20, 30, 40, 50, 60, 70]);
  assert.deepEqual(batches, [[1, 2, 3], [4, 5, 6], [7]]);
});

test("a failed batch rejects each of its calls and the next batch still runs", async () => {
  let calls = 0;
  const batcher = new Batcher<number, number>(async (items) => {
    calls += 1;
    if (calls === 1) throw new Error("store down");
    return items;
  });
  const first = batcher.add(1);
  await assert.rejects(first, /store down/);
  assert.equal(await batcher.add(2), 2);
});
