import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { deliveryIdFor, type StoreConnection } from "@hookline/store";
import { readTestSettings } from "@hookline/testkit";
import pg from "pg";
import { openQueueHandle, openWorker } from "./handles.js";
import { DeliveryProducer, type FedQueue, jobIdFor, type QueueBackend, QueueRouting } from "./index.js";
import { openTestQueues } from "./test-helpers.js";

const settings = readTestSettings(process.env);

let opened: Awaited<ReturnType<typeof openTestQueues>>;
let store: StoreConnection;
let queues: QueueBackend;
let producer: DeliveryProducer;
const routing = new QueueRouting(0, { maxInFlight: 3 });
const fed: FedQueue[][] = [];
before(async () => {
  opened = await openTestQueues(settings, routing, { onFed: (queues) => fed.push(queues) });
  ({ store, queues, producer } = opened);
});
after(async () => {
  await opened?.dispose();
});

test("adding the same delivery twice (and concurrently) adds one job, carrying ids only", async () => {
  const deliveryId = deliveryIdFor("t", "order:1", "acct:7");
  const dueAt = Date.now() + 60_000;
  const item = { deliveryId, tenantId: "t", endpointId: "acct:7", attemptNumber: 1, dueAt };
  await Promise.all([producer.enqueue([item]), producer.enqueue([item])]);
  await producer.enqueue([item]);
  const queue = openQueueHandle(queues, routing.queueOf({ tenantId: "t", endpointId: "acct:7" }));
  try {
    const jobs = await queue.getJobs(["delayed", "waiting"]);
    assert.deepEqual(
      jobs.map((job) => [job.id, job.data]),
      [[deliveryId, { deliveryId, attemptNumber: 1 }]],
    );
    assert.equal(await producer.hasLiveJob(item, deliveryId, 1), true);
    assert.equal(await producer.hasLiveJob(item, deliveryId, 2), false);
    // Consumers hear which queue was fed and when its job is due, so they open it in time.
    const news = fed.flat().filter((f) => f.queue === queue.name);
    assert.ok(news.length >= 1);
    // One instant: the time asked for, the time consumers hear, and BullMQ's own due time.
    assert.ok(news.every((f) => f.dueAt === dueAt));
    assert.equal((jobs[0]?.timestamp ?? 0) + (jobs[0]?.delay ?? 0), dueAt);
  } finally {
    await queue.close();
  }
});

test("one add to a few queues or to a fan-out of many leaves a job in every queue it names", async () => {
  // A few queues go through each queue's handle, a fan-out through one multi-queue add (Redis).
  for (const endpoints of [3, 100]) {
    const items = Array.from({ length: endpoints }, (_, i) => ({
      deliveryId: deliveryIdFor("t", `fan-${endpoints}`, `ep-${i}`),
      tenantId: "t",
      endpointId: `fan-${endpoints}-ep-${i}`,
      attemptNumber: 1,
    }));
    await producer.enqueue(items);
    const held = await Promise.all(items.map((item) => producer.hasLiveJob(item, item.deliveryId, 1)));
    assert.equal(held.filter(Boolean).length, endpoints);
  }
});

test("an add that feeds a few queues reaches Redis in one socket write", async (t) => {
  if (queues.kind !== "redis") return t.skip("on PostgreSQL an add of many jobs is one statement");
  const items = (round: number) =>
    Array.from({ length: 4 }, (_, i) => ({
      deliveryId: deliveryIdFor("t", `together-${round}`, `ep-${i}`),
      tenantId: "t",
      endpointId: `together-ep-${i}`,
      attemptNumber: 1,
    }));
  // The first add opens the queues' handles, which write their settings.
  await producer.enqueue(items(1));
  // Every write the socket makes to the kernel goes through one of these two.
  const socket = queues.connection.stream as unknown as {
    _write: (...args: unknown[]) => void;
    _writev: (...args: unknown[]) => void;
  };
  const { _write: write, _writev: writev } = socket;
  let writes = 0;
  socket._write = function (...args) {
    writes += 1;
    write.apply(this, args);
  };
  socket._writev = function (...args) {
    writes += 1;
    writev.apply(this, args);
  };
  try {
    await producer.enqueue(items(2));
  } finally {
    socket._write = write;
    socket._writev = writev;
  }
  assert.equal(writes, 1);
  const held = await Promise.all(items(2).map((item) => producer.hasLiveJob(item, item.deliveryId, 1)));
  assert.deepEqual(held, [true, true, true, true]);
});

test("a retry or manual attempt that is due is taken before the endpoint's backlog of first attempts", async () => {
  const endpoint = { tenantId: "t", endpointId: "backlog" };
  const first = (n: number) => ({
    ...endpoint,
    deliveryId: deliveryIdFor("t", `new:${n}`, "backlog"),
    attemptNumber: 1,
  });
  const retry = {
    ...endpoint,
    deliveryId: deliveryIdFor("t", "old", "backlog"),
    attemptNumber: 3,
  };
  const manual = { ...first(99), manual: true };
  // A few jobs for one queue in one add, then many (on Redis they are added differently).
  await producer.enqueue([first(1), first(2), first(3)]);
  await producer.enqueue([4, 5, 6, 7, 8].map(first));
  await producer.enqueue([retry]);
  await producer.enqueue([manual]);
  const worker = openWorker(queues, routing.queueOf(endpoint), async () => {}, { autorun: false });
  try {
    const taken: string[] = [];
    for (let i = 0; i < 10; i += 1) {
      const job = await worker.getNextJob("test-token", { block: false });
      assert.ok(job, `job ${i + 1} of 10 was handed out`);
      taken.push(job.id ?? "");
    }
    assert.deepEqual(taken, [
      jobIdFor(retry.deliveryId, 3),
      jobIdFor(manual.deliveryId, 1),
      ...[1, 2, 3, 4, 5, 6, 7, 8].map((n) => jobIdFor(first(n).deliveryId, 1)),
    ]);
  } finally {
    await worker.close(true);
  }
});

test("queue names and job ids hold no colon; lanes spread endpoints over N queues", () => {
  const queueOf = (tenantId: string, endpointId: string, lanes: number) =>
    new QueueRouting(lanes, { maxInFlight: 2 }).queueOf({ tenantId, endpointId });
  assert.ok(!queueOf("a:b", "c:d", 0).includes(":"));
  assert.notEqual(queueOf("t", "a", 0), queueOf("t", "b", 0));
  assert.notEqual(queueOf("t1", "ab", 0), queueOf("t1a", "b", 0));
  const lanes = new Set(Array.from({ length: 200 }, (_, i) => queueOf("t", `ep${i}`, 4)));
  assert.deepEqual([...lanes].sort(), [
    "hookline-lane-0",
    "hookline-lane-1",
    "hookline-lane-2",
    "hookline-lane-3",
  ]);
  assert.equal(jobIdFor("dl_x", 1), "dl_x");
  assert.equal(jobIdFor("dl_x", 3), "dl_x.3");
});

test("one routing names each endpoint's queue as a fresh one does, for more endpoints than it keeps names of", () => {
  const limits = { maxInFlight: 2 };
  const routing = new QueueRouting(0, limits);
  // Kept names are looked up by tenant and endpoint together: these two must not share one.
  assert.notEqual(
    routing.queueOf({ tenantId: "t1", endpointId: "ab" }),
    routing.queueOf({ tenantId: "t1a", endpointId: "b" }),
  );
  const endpoints = Array.from({ length: 5000 }, (_, i) => ({ tenantId: `t${i % 7}`, endpointId: `ep${i}` }));
  const fresh = endpoints.map((endpoint) => new QueueRouting(0, limits).queueOf(endpoint));
  assert.deepEqual(
    endpoints.map((endpoint) => routing.queueOf(endpoint)),
    fresh,
  );
  // Backwards: the latest names are found kept, the earliest were dropped to make room.
  assert.deepEqual(
    [...endpoints].reverse().map((endpoint) => routing.queueOf(endpoint)),
    [...fresh].reverse(),
  );
  assert.equal(new Set(fresh).size, endpoints.length);
});

test("an add the PostgreSQL queue backend refuses fails the enqueue, so the caller hears of it", async (t) => {
  if (queues.kind !== "postgres") return t.skip("a refused MULTI rejects on Redis; this is about PostgreSQL");
  // Take away the SQL function BullMQ adds jobs with: its statement fails, which bullmq 6.7's
  // FlowProducer alone would not report.
  const admin = new pg.Client(store.pgConfig);
  await admin.connect();
  const rename = (from: string, to: string) =>
    admin.query(`DO $$ DECLARE f regprocedure; BEGIN
      SELECT p.oid::regprocedure INTO f FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'bullmq' AND p.proname = '${from}';
      EXECUTE format('ALTER FUNCTION %s RENAME TO ${to}', f);
    END $$`);
  const item = { tenantId: "t", endpointId: "refused", attemptNumber: 1 };
  try {
    await rename("add_flow", "add_flow_taken_away");
    await assert.rejects(
      producer.enqueue([{ ...item, deliveryId: deliveryIdFor("t", "e:refused", "refused") }]),
      /add_flow/,
    );
  } finally {
    await rename("add_flow_taken_away", "add_flow");
    await admin.end();
  }
  // And the next add, once the backend is whole again, goes through.
  const deliveryId = deliveryIdFor("t", "e:accepted", "refused");
  await producer.enqueue([{ ...item, deliveryId }]);
  assert.equal(await producer.hasLiveJob(item, deliveryId, 1), true);
});

test("a job BullMQ gave up on counts as no job, so the attempt can be added again", async () => {
  // Its infrastructure retries run out at once: the job lands in the failed set, where its id
  // would make every later add of the attempt do nothing.
  const once = new DeliveryProducer(queues, routing, { infrastructureRetries: 1 });
  const item = {
    tenantId: "t",
    endpointId: "gave-up",
    deliveryId: deliveryIdFor("t", "e:gave-up", "gave-up"),
    attemptNumber: 1,
  };
  const worker = openWorker(queues, routing.queueOf(item), async () => {}, { autorun: false });
  try {
    await once.enqueue([item]);
    const job = await worker.getNextJob("test-token", { block: false });
    assert.equal(job?.id, jobIdFor(item.deliveryId, 1));
    await job?.moveToFailed(new Error("the store was down"), "test-token");
    assert.equal(await job?.getState(), "failed");

    assert.equal(await once.hasLiveJob(item, item.deliveryId, 1), false);
    await once.enqueue([item]);
    assert.equal(await once.hasLiveJob(item, item.deliveryId, 1), true);
    const again = await worker.getNextJob("test-token", { block: false });
    assert.equal(again?.id, jobIdFor(item.deliveryId, 1), "the attempt runs again");
  } finally {
    await worker.close(true);
    await once.close();
  }
});

test("a queue's jobs in flight are counted across every worker that took one", async () => {
  const endpoint = { tenantId: "t", endpointId: "in-flight" };
  const items = [1, 2, 3].map((n) => ({
    ...endpoint,
    deliveryId: deliveryIdFor("t", `e:in-flight:${n}`, endpoint.endpointId),
    attemptNumber: 1,
  }));
  const queue = routing.queueOf(endpoint);
  // Two workers (as if in two processes), taking jobs by hand: nothing finishes them meanwhile.
  const [one, two] = [1, 2].map(() => openWorker(queues, queue, async () => {}, { autorun: false }));
  assert.ok(one && two);
  try {
    await producer.enqueue(items);
    assert.equal(await producer.readInFlight(queue), 0);
    const first = await one.getNextJob("one", { block: false });
    await one.getNextJob("one", { block: false });
    await two.getNextJob("two", { block: false });
    assert.equal(await producer.readInFlight(queue), 3);
    await first?.moveToCompleted("done", "one", false);
    assert.equal(await producer.readInFlight(queue), 2);
  } finally {
    await Promise.all([one.close(true), two.close(true)]);
  }
});
