import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connectStore, deliveryIdFor, type StoreConnection } from "@hookline/store";
import { createTestBackend, readTestSettings, type TestBackend } from "@hookline/testkit";
import { Queue } from "bullmq";
import { DeliveryProducer, jobIdFor, openQueueBackend, type QueueBackend, queueNameFor } from "./index.js";

const settings = readTestSettings(process.env);

let backend: TestBackend;
let store: StoreConnection;
let queues: QueueBackend;
let producer: DeliveryProducer;
before(async () => {
  backend = await createTestBackend(settings);
  store = await connectStore(backend.databaseUrl ? { databaseUrl: backend.databaseUrl } : { dataDir: null });
  queues = await openQueueBackend(
    backend.redis
      ? { kind: "redis", redis: backend.redis, prefix: backend.prefix }
      : { kind: "postgres", pg: store.pgConfig, embedded: true, pollIntervalMs: 50 },
  );
  producer = new DeliveryProducer(queues, { lanes: 0, endpointConcurrency: 3 });
});
after(async () => {
  await producer.close();
  await queues.close();
  await store.close();
  await backend.dispose();
});

test("adding the same delivery twice (and concurrently) adds one job, carrying ids only", async () => {
  const deliveryId = deliveryIdFor("t", "order:1", "acct:7");
  const item = { deliveryId, tenantId: "t", endpointId: "acct:7", attemptNumber: 1, delayMs: 60_000 };
  await Promise.all([producer.enqueue([item]), producer.enqueue([item])]);
  await producer.enqueue([item]);
  const queue = new Queue(
    queueNameFor("t", "acct:7", 0),
    queues.queueConnection() as never,
    queues.factory as never,
  );
  try {
    const jobs = await queue.getJobs(["delayed", "waiting"]);
    assert.deepEqual(
      jobs.map((job) => [job.id, job.data]),
      [[deliveryId, { deliveryId, attemptNumber: 1 }]],
    );
    assert.equal(await queue.getGlobalConcurrency(), 3, "the per-endpoint cap lives in the queue");
    assert.equal(await producer.hasJob("t", "acct:7", deliveryId, 1), true);
    assert.equal(await producer.hasJob("t", "acct:7", deliveryId, 2), false);
  } finally {
    await queue.close();
  }
});

test("queue names and job ids hold no colon; lanes spread endpoints over N queues", () => {
  assert.ok(!queueNameFor("a:b", "c:d", 0).includes(":"));
  assert.notEqual(queueNameFor("t", "a", 0), queueNameFor("t", "b", 0));
  assert.notEqual(queueNameFor("t1", "ab", 0), queueNameFor("t1a", "b", 0));
  const lanes = new Set(Array.from({ length: 200 }, (_, i) => queueNameFor("t", `ep${i}`, 4)));
  assert.deepEqual([...lanes].sort(), [
    "hookline-lane-0",
    "hookline-lane-1",
    "hookline-lane-2",
    "hookline-lane-3",
  ]);
  assert.equal(jobIdFor("dl_x", 1), "dl_x");
  assert.equal(jobIdFor("dl_x", 3), "dl_x.3");
});
