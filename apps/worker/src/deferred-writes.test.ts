import assert from "node:assert/strict";
import { test } from "node:test";
import { DeferredWrites } from "./deferred-writes.js";

/** Writes that finish (or fail) when the test says so. */
function held() {
  let finish: (error?: Error) => void = () => {};
  const done = new Promise<void>((resolve, reject) => {
    finish = (error) => (error ? reject(error) : resolve());
  });
  return { writes: () => done, finish };
}

const job = (queue: string) => ({ queue, deliveryId: `d-${queue}` });

function deferredWrites(max: number, clock = { now: 0 }) {
  const errors: string[] = [];
  const deferred = new DeferredWrites({
    max,
    inlineAfterFailureMs: 10_000,
    onError: (error, of) => errors.push(`${of.deliveryId}: ${error.message}`),
    now: () => clock.now,
  });
  return { deferred, errors, clock };
}

/** Whether the promise has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test("writes run after the job, counted by queue and delivery; drain waits for every one", async () => {
  const { deferred } = deferredWrites(2);
  const first = held();
  const second = held();
  await deferred.run(job("q1"), first.writes);
  await deferred.run(job("q2"), second.writes);
  assert.deepEqual([deferred.hasPending("q1"), deferred.hasPending("q2")], [true, true]);
  assert.deepEqual([deferred.isRecording("d-q1"), deferred.isRecording("d-q3")], [true, false]);
  const draining = deferred.drain();
  first.finish();
  assert.equal(await settled(draining), false, "q2's writes are still pending");
  assert.equal(deferred.hasPending("q1"), false);
  assert.deepEqual([deferred.isRecording("d-q1"), deferred.isRecording("d-q2")], [false, true]);
  second.finish();
  await draining;
  assert.equal(deferred.hasPending("q2"), false);
});

test("beyond the most pending, a job waits for its own writes, and their failure is the job's", async () => {
  const { deferred, errors } = deferredWrites(1);
  const pending = held();
  await deferred.run(job("q"), pending.writes);
  const own = held();
  const running = deferred.run(job("q"), own.writes);
  assert.equal(await settled(running), false, "waits for its own writes");
  own.finish(new Error("store down"));
  await assert.rejects(running, /store down/);
  assert.deepEqual(errors, [], "the job fails, and BullMQ runs it again");
  pending.finish();
  await deferred.drain();
});

test("after deferred writes failed, jobs wait for their own writes for a while", async () => {
  const { deferred, errors, clock } = deferredWrites(10);
  await deferred.run(job("q"), async () => {
    throw new Error("record failed");
  });
  await deferred.drain();
  assert.deepEqual(errors, ["d-q: record failed"], "reported with the delivery");
  const during = held();
  const running = deferred.run(job("q"), during.writes);
  assert.equal(await settled(running), false, "within 10 s of the failure: waits");
  during.finish();
  await running;
  clock.now = 10_000;
  const after = held();
  assert.equal(await settled(deferred.run(job("q"), after.writes)), true, "deferred again");
  after.finish();
  await deferred.drain();
});
