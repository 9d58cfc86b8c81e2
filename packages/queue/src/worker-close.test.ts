import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { readTestSettings } from "@hookline/testkit";
import { openWorker } from "./handles.js";
import { queuesBehindRelay } from "./test-helpers.js";
import { closeWorker } from "./worker-close.js";

const settings = readTestSettings(process.env);
const skip = settings.kind !== "servers" && "the embedded run has no Redis";

/** A Worker waiting for jobs on Redis behind a relay, and the relay already down. */
async function workerCutOff() {
  const setup = await queuesBehindRelay(settings);
  const worker = openWorker(setup.queues, "close-test", async () => {}, { autorun: false, concurrency: 1 });
  worker.on("error", () => {});
  const drained = once(worker, "drained");
  void worker.run().catch(() => {});
  await drained;
  const blocking = await worker.backend.blockingConnection?.client;
  assert.ok(blocking, "a Redis Worker has a blocking connection");
  const away = new Promise((resolve) => blocking.once("reconnecting", resolve));
  await setup.relay.goDown();
  // Between retries: the state in which BullMQ's own close waits for good.
  await away;
  return { ...setup, worker };
}

const noJobs = { inFlight: 0, lastBusyAt: 0 };

test("a Worker closed while Redis is away closes once Redis is back", { skip, timeout: 20_000 }, async () => {
  const { queues, worker, relay, dispose } = await workerCutOff();
  try {
    const closing = closeWorker(queues, worker, noJobs, 60_000);
    await relay.comeBack();
    assert.equal(await closing, "closed");
  } finally {
    await dispose();
  }
});

test("a Worker whose jobs are done is no longer waited for while Redis stays away; it closes when Redis is back", {
  skip,
  timeout: 20_000,
}, async () => {
  const { queues, worker, relay, dispose } = await workerCutOff();
  try {
    const job = { inFlight: 1, lastBusyAt: Date.now() };
    let outcome: string | undefined;
    let closedYet = false;
    // Not events.once: that rejects on the Worker's connection errors.
    const closed = new Promise<void>((resolve) =>
      worker.once("closed", () => {
        closedYet = true;
        resolve();
      }),
    );
    const closing = closeWorker(queues, worker, job, 200).then((result) => {
      outcome = result;
      return result;
    });
    // A job in flight holds the close however long it takes: two graces pass, still waiting.
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(outcome, undefined, "given up while a job was in flight");
    job.inFlight = 0;
    job.lastBusyAt = Date.now();
    assert.equal(await closing, "still-closing");
    assert.equal(closedYet, false);
    await relay.comeBack();
    await closed;
  } finally {
    await dispose();
  }
});

test("a Worker opened while Redis is away closes at once", { skip, timeout: 20_000 }, async () => {
  const { queues, relay, dispose } = await queuesBehindRelay(settings);
  try {
    await relay.goDown();
    const worker = openWorker(queues, "close-test", async () => {}, { autorun: false, concurrency: 1 });
    worker.on("error", () => {});
    void worker.run().catch(() => {});
    assert.equal(await closeWorker(queues, worker, noJobs, 60_000), "closed");
  } finally {
    await relay.comeBack();
    await dispose();
  }
});
