import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connectStore, type StoreConnection } from "@hookline/store";
import { createTestBackend, eventually, held, readTestSettings, type TestBackend } from "@hookline/testkit";
import {
  DeliveryConsumer,
  DeliveryProducer,
  openQueueBackend,
  type QueueBackend,
  QueueRouting,
} from "./index.js";

const settings = readTestSettings(process.env);
const limits = { maxInFlight: 2 };
const routing = new QueueRouting(0, limits);

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
  producer = new DeliveryProducer(queues, routing);
});
after(async () => {
  await producer.close();
  await queues.close();
  await store.close();
  await backend.dispose();
});

test("a read of the store begun before a queue closed does not open it again; a later read does", async () => {
  const endpoint = { tenantId: "t", endpointId: "ep-stale" };
  const other = { tenantId: "t", endpointId: "ep-never-open" };
  const queue = routing.queueOf(endpoint);
  const ran = held();
  const consumer = new DeliveryConsumer(
    queues,
    async () => ran.release(undefined),
    { maxOpenQueues: 4, idleCloseMs: 100, turnMs: 60_000, stalledAfterMs: 30_000 },
    producer,
  );
  const demandFor = (ref: typeof endpoint) => [
    { queue: routing.queueOf(ref), dueAt: Date.now(), limits, endpoint: ref },
  ];
  try {
    await producer.enqueue([{ ...endpoint, deliveryId: "dl_stale", attemptNumber: 1 }]);
    // A scan starts reading while the delivery is pending...
    const staleRead = consumer.readMark();
    // ...meanwhile the queue opens on other news, runs the job and closes, idle.
    consumer.demand(demandFor(endpoint));
    await ran.promise;
    await eventually(
      async () => consumer.isOpen(queue),
      (open) => !open,
    );

    // The scan's result arrives: it still lists the delivery it read as pending.
    consumer.demand(demandFor(endpoint), staleRead);
    assert.equal(consumer.isOpen(queue), false, "a Worker opened for work already done");
    assert.equal(consumer.waitingQueueCount, 0);
    // The same read still opens a queue that did not close after it began.
    consumer.demand(demandFor(other), staleRead);
    assert.equal(consumer.isOpen(routing.queueOf(other)), true);

    // A read begun after the close is believed: work it finds gets its queue opened.
    consumer.demand(demandFor(endpoint), consumer.readMark());
    assert.equal(consumer.isOpen(queue), true);
  } finally {
    await consumer.close();
  }
});
