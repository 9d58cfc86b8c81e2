import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, held, readTestSettings } from "@hookline/testkit";
import { DeliveryConsumer, QueueRouting } from "./index.js";
import { openTestQueues } from "./test-helpers.js";

const settings = readTestSettings(process.env);
const limits = { maxInFlight: 2 };
const routing = new QueueRouting(0, limits);

let opened: Awaited<ReturnType<typeof openTestQueues>>;
before(async () => {
  opened = await openTestQueues(settings, routing);
});
after(async () => {
  await opened?.dispose();
});

test("a read of the store begun before a queue closed does not open it again; a later read does", async () => {
  const endpoint = { tenantId: "t", endpointId: "ep-stale" };
  const other = { tenantId: "t", endpointId: "ep-never-open" };
  const queue = routing.queueOf(endpoint);
  const { queues, producer } = opened;
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
