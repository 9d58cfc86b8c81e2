import assert from "node:assert/strict";
import { test } from "node:test";
import { held, readTestSettings } from "@hookline/testkit";
import { Redis } from "ioredis";
import { DeliveryConsumer, DeliveryProducer, QueueRouting } from "./index.js";
import { next, queuesBehindRelay } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const endpoint = { tenantId: "t", endpointId: "ep" };
const limits = { maxInFlight: 4 };

/** A consumer whose jobs each wait to be let go, then report whether their worker still held them. */
function heldJobs() {
  const started = new Map<string, ReturnType<typeof held>>();
  const gates = new Map<string, ReturnType<typeof held>>();
  const answers = new Map<string, ReturnType<typeof held<boolean>>>();
  const slot = <T>(map: Map<string, T>, id: string, make: () => T) => {
    const known = map.get(id);
    if (known) return known;
    const made = make();
    map.set(id, made);
    return made;
  };
  const gate = (id: string) => slot(gates, id, () => held());
  const answer = (id: string) => slot(answers, id, () => held<boolean>());
  const start = (id: string) => slot(started, id, () => held());
  return {
    started: (id: string) => start(id).promise,
    letGo: (id: string) => gate(id).release(undefined),
    answer: (id: string) => answer(id).promise,
    processor: async (job: { deliveryId: string }, _queue: string, stillHeld: () => Promise<boolean>) => {
      start(job.deliveryId).release(undefined);
      await gate(job.deliveryId).promise;
      answer(job.deliveryId).release(await stillHeld());
    },
  };
}

test("a job that outlived a Redis restarted empty is told it is no longer held; one that outlived a blip still is", {
  skip: settings.kind !== "servers" && "the embedded run has no Redis",
}, async () => {
  const { backend, redis, relay, queues, dispose } = await queuesBehindRelay(settings);
  const routing = new QueueRouting(0, limits);
  const producer = new DeliveryProducer(queues, routing);
  const jobs = heldJobs();
  const consumer = new DeliveryConsumer(
    queues,
    jobs.processor,
    { maxOpenQueues: 4, idleCloseMs: 60_000, turnMs: 60_000, stalledAfterMs: 30_000 },
    producer,
  );
  const direct = new Redis({ ...redis, maxRetriesPerRequest: 1 });
  const run = async (deliveryId: string) => {
    await producer.enqueue([{ ...endpoint, deliveryId, attemptNumber: 1 }]);
    consumer.demand([{ queue: routing.queueOf(endpoint), dueAt: Date.now(), limits, endpoint }]);
    await jobs.started(deliveryId);
  };
  const outage = async (whileDown: () => Promise<void>) => {
    const reconnecting = next(queues, "reconnecting");
    await relay.goDown();
    await reconnecting;
    await whileDown();
    const ready = next(queues, "ready");
    await relay.comeBack();
    await ready;
  };
  try {
    // Redis went away and came back with its data: the job is still this worker's to run.
    await run("dl_blip");
    await outage(async () => {});
    jobs.letGo("dl_blip");
    assert.equal(await jobs.answer("dl_blip"), true);

    // Redis came back empty: the job, and its place among the jobs in flight, are gone.
    await run("dl_lost");
    await outage(async () => {
      const keys = await direct.keys(`${backend.prefix}:*`);
      if (keys.length > 0) await direct.del(...keys);
    });
    jobs.letGo("dl_lost");
    assert.equal(await jobs.answer("dl_lost"), false);
  } finally {
    jobs.letGo("dl_blip");
    jobs.letGo("dl_lost");
    await consumer.close();
    await producer.close();
    direct.disconnect();
    await dispose();
  }
});
