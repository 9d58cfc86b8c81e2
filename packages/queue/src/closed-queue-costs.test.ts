import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { eventually, held, readTestSettings } from "@hookline/testkit";
import { Redis } from "ioredis";
import pg from "pg";
import { DeliveryConsumer, QueueRouting } from "./index.js";
import { openTestQueues } from "./test-helpers.js";

// What an endpoint's queue costs once it has served its jobs: no Worker reopened on stale news,
// and no long history of BullMQ events kept.

const settings = readTestSettings(process.env);
const limits = { maxInFlight: 8 };
const routing = new QueueRouting(0, limits);

let opened: Awaited<ReturnType<typeof openTestQueues>>;
before(async () => {
  opened = await openTestQueues(settings, routing);
});
after(async () => {
  await opened?.dispose();
});

/** The BullMQ events a queue holds now: its Redis stream, or its rows of the PostgreSQL backend's table. */
async function eventsHeld(queue: string): Promise<number> {
  const { backend, store } = opened;
  if (backend.redis) {
    const redis = new Redis(backend.redis);
    try {
      return await redis.xlen(`${backend.prefix}:${queue}:events`);
    } finally {
      redis.disconnect();
    }
  }
  const client = new pg.Client(store.pgConfig);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from bullmq.event where queue = $1",
      [queue],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}

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

test("an endpoint's queue keeps a few hundred BullMQ events, not 10,000, however much it delivers", async () => {
  const endpoint = { tenantId: "t", endpointId: "ep-busy" };
  const queue = routing.queueOf(endpoint);
  const jobs = 500;
  const { queues, producer } = opened;
  let ran = 0;
  const allRan = held();
  const consumer = new DeliveryConsumer(
    queues,
    async () => {
      ran += 1;
      if (ran === jobs) allRan.release(undefined);
    },
    { maxOpenQueues: 4, idleCloseMs: 60_000, turnMs: 60_000, stalledAfterMs: 30_000 },
    producer,
  );
  try {
    for (let from = 0; from < jobs; from += 100)
      await producer.enqueue(
        Array.from({ length: 100 }, (_, i) => ({
          ...endpoint,
          deliveryId: `dl_${from + i}`,
          attemptNumber: 1,
        })),
      );
    consumer.demand([{ queue, dueAt: Date.now(), limits, endpoint }]);
    await allRan.promise;
  } finally {
    await consumer.close();
  }
  // Each job published at least three events (added, active, completed): 1,500 in all, every one
  // of them kept at BullMQ's default. Trimming is approximate: Redis drops whole stream nodes of
  // 100 entries, and the PostgreSQL backend trims on every 256th event.
  const kept = await eventsHeld(queue);
  assert.ok(kept > 0, "the queue's events are where this test looks for them");
  assert.ok(kept <= 400, `${kept} events kept`);
});
