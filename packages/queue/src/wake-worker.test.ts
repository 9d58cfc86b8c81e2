import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTestBackend, eventually, readTestSettings, type TestBackend } from "@hookline/testkit";
import { openQueueHandle, openWorker, wakeWorker } from "./handles.js";
import { openQueueBackend, type QueueBackend } from "./index.js";

const settings = readTestSettings(process.env);
const onRedis = {
  skip: settings.kind !== "servers" && "Redis only: the PostgreSQL backend's Workers wait in Node",
};

let backend: TestBackend;
let queues: QueueBackend;
before(async () => {
  if (settings.kind !== "servers") return;
  backend = await createTestBackend(settings);
  const redis = backend.redis;
  assert.ok(redis, "the servers run has Redis");
  queues = await openQueueBackend({ kind: "redis", redis, prefix: backend.prefix });
});
after(async () => {
  await queues?.close();
  await backend?.dispose();
});

test("waking a Worker that waits on Redis makes it take a job that came due at once", onRedis, async () => {
  if (queues.kind !== "redis") return;
  const redis = queues.connection;
  const name = "wake-test";
  const queue = openQueueHandle<{ n: number }>(queues, name);
  // Due in a minute: the Worker blocks until then (at most BullMQ's 10 s per wait).
  await queue.add("deliver", { n: 1 }, { jobId: "due-later", delay: 60_000 });
  let taken: () => void = () => {};
  const tookIt = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const worker = openWorker(queues, name, async () => taken(), { autorun: true });
  try {
    await worker.waitUntilReady();
    const blocked = () =>
      redis.call("CLIENT", "LIST").then((list) =>
        String(list)
          .split("\n")
          .filter((c) => c.includes("cmd=bzpopmin")),
      );
    await eventually(blocked, (clients) => clients.length > 0);
    // Make the job due the way time would, without the marker BullMQ adds when it moves a job:
    // only a wake-up reaches the Worker now, before its wait of up to 10 s ends.
    const delayedKey = `${backend.prefix}:${name}:delayed`;
    assert.equal(await redis.zadd(delayedKey, "XX", (Date.now() - 1000) * 0x1000, "due-later"), 0);
    await wakeWorker(queues, worker);
    // Half the Worker's own wait: a job taken in time was taken on the wake-up.
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error("the Worker did not take the job on the wake-up")), 5_000);
    });
    await Promise.race([tookIt, late]).finally(() => clearTimeout(deadline));
  } finally {
    await worker.close(true);
    await queue.close();
  }
});
