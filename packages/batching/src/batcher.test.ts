import assert from "node:assert/strict";
import { test } from "node:test";
import { held } from "@hookline/testkit";
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

test("calls that arrive in separate callbacks of one turn of the event loop share one batch", async () => {
  const batches: number[][] = [];
  const batcher = new Batcher<number, number>(async (items) => {
    batches.push(items);
    return items;
  });
  // Timers due at once run in one phase of the loop, each its own callback with its promise jobs
  // after it, as the requests read from one socket are handled one by one.
  const results = await Promise.all(
    [1, 2, 3, 4].map(
      (n) =>
        new Promise<number>((resolve, reject) => setTimeout(() => batcher.add(n).then(resolve, reject), 0)),
    ),
  );
  assert.deepEqual(results, [1, 2, 3, 4]);
  assert.deepEqual(batches, [[1, 2, 3, 4]]);
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

test("a batch that runs past afterMs stops holding back the next, up to maxRunning at once", {
  timeout: 5000,
}, async () => {
  const holds = [held(), held(), held()] as const;
  const starts = [held(), held(), held()] as const;
  const started: number[][] = [];
  const batcher = new Batcher<number, number>(
    async (items) => {
      const index = started.push(items) - 1;
      starts[index]?.release();
      await holds[index]?.promise;
      return items;
    },
    256,
    1,
    { afterMs: 10, maxRunning: 2 },
  );
  const first = batcher.add(1);
  await starts[0].promise;
  const second = batcher.add(2);
  // The first batch still runs; once it is slow, the second starts beside it.
  await starts[1].promise;
  const third = batcher.add(3);
  // Two running is the most: the third waits, however slow both are.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(started, [[1], [2]]);
  holds[1].release();
  assert.equal(await second, 2);
  await starts[2].promise;
  holds[0].release();
  holds[2].release();
  assert.deepEqual(await Promise.all([first, third]), [1, 3]);
  assert.deepEqual(started, [[1], [2], [3]]);
});

test("without slow batches, calls wait for the batch in flight however long it runs", async () => {
  const first = held();
  const order: string[] = [];
  const batcher = new Batcher<number, number>(async (items) => {
    order.push(`start ${items.join(",")}`);
    if (items[0] === 1) await first.promise;
    order.push(`end ${items.join(",")}`);
    return items;
  });
  const slow = batcher.add(1);
  await new Promise((resolve) => setImmediate(resolve));
  const next = batcher.add(2);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.deepEqual(order, ["start 1"]);
  first.release();
  await Promise.all([slow, next]);
  assert.deepEqual(order, ["start 1", "end 1", "start 2", "end 2"]);
});
