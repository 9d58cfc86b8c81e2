import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually, held, readTestSettings } from "@hookline/testkit";
import {
  DeliveryConsumer,
  type LimitsWrite,
  openQueueHandle,
  type QueueLimits,
  QueueRouting,
  rateWindow,
} from "./index.js";
import { openTestQueues } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const endpoint = { tenantId: "t", endpointId: "ep-limits" };

test("a learned limit's write leaves the queue's rate as it is (one the api wrote since stands) for 30 s; a new rate is written", async () => {
  const routing = new QueueRouting(0, { maxInFlight: 4, adaptive: true });
  const { queues, producer, dispose } = await openTestQueues(settings, routing);
  // The consumer writes through the producer, as the worker does; each write is awaited whole.
  let landed = held();
  let clock = Date.now();
  const writer = {
    async writeQueueLimits(queue: string, limits: QueueLimits, how?: LimitsWrite) {
      await producer.writeQueueLimits(queue, limits, how);
      landed.release();
    },
  };
  const consumer = new DeliveryConsumer(
    queues,
    async () => {},
    { maxOpenQueues: 4, idleCloseMs: 600_000, turnMs: 600_000, stalledAfterMs: 30_000, now: () => clock },
    writer,
  );
  const name = routing.queueOf(endpoint);
  const queue = openQueueHandle(queues, name);
  const inQueue = async () => ({
    concurrency: await queue.getGlobalConcurrency(),
    rate: await queue.getGlobalRateLimit(),
  });
  const window = (perSecond: number) => {
    const [max, duration] = rateWindow(perSecond);
    return { max, duration };
  };
  const change = async (limits: QueueLimits) => {
    landed = held();
    consumer.updateLimits([{ queue: name, limits }]);
    await landed.promise;
  };
  try {
    // A write begun before Redis's connection is first ready counts as lost with it (see
    // connectionGeneration), and the next is written whole: start from a connected backend.
    await eventually(
      () => queues.ping(),
      (ready) => ready,
    );
    const atTen = { maxInFlight: 4, adaptive: true, ratePerSecond: 10 };
    consumer.demand([{ queue: name, dueAt: Date.now(), limits: atTen, endpoint }]);
    await landed.promise;
    assert.deepEqual(await inQueue(), { concurrency: 4, rate: window(10) });

    // The endpoint's rate is updated through the api, which writes it into the queue at once; the
    // worker has not heard of it when its learned limit rises.
    await producer.writeLimits(endpoint, { maxInFlight: null, ratePerSecond: 20 });
    await change({ ...atTen, maxInFlight: 8 });
    assert.deepEqual(await inQueue(), { concurrency: 8, rate: window(20) });

    // The worker hears of a new rate: that write carries it.
    await change({ ...atTen, maxInFlight: 8, ratePerSecond: 30 });
    assert.deepEqual(await inQueue(), { concurrency: 8, rate: window(30) });
    // And of the rate taken away.
    await change({ maxInFlight: 8, adaptive: true });
    assert.deepEqual(await inQueue(), { concurrency: 8, rate: null });

    // A rate lost without notice (here: set behind the worker's back) is put right once 30 s of
    // the limit's moves have passed since the rate was last written, not before.
    await change({ maxInFlight: 8, adaptive: true, ratePerSecond: 10 });
    await queue.setGlobalRateLimit(...rateWindow(40));
    clock += 29_000;
    await change({ maxInFlight: 6, adaptive: true, ratePerSecond: 10 });
    assert.deepEqual(await inQueue(), { concurrency: 6, rate: window(40) });
    clock += 1_000;
    await change({ maxInFlight: 7, adaptive: true, ratePerSecond: 10 });
    assert.deepEqual(await inQueue(), { concurrency: 7, rate: window(10) });
  } finally {
    await consumer.close();
    await queue.close();
    await dispose();
  }
});
