import assert from "node:assert/strict";
import { test } from "node:test";
import { DueWakeups } from "./due-wakeups.js";

/** DueWakeups' timer does not hold the process open (a worker may exit with retries pending): the test does. */
async function held<T>(promise: Promise<T>): Promise<T> {
  const keepAlive = setInterval(() => {}, 1000);
  try {
    return await promise;
  } finally {
    clearInterval(keepAlive);
  }
}

test("each queue is woken once per registered time, earliest first, and not before its time", async () => {
  const woken: { queue: string; at: number }[] = [];
  let done: () => void = () => {};
  const allWoken = new Promise<void>((resolve) => {
    done = resolve;
  });
  const wakeups = new DueWakeups((queue) => {
    woken.push({ queue, at: Date.now() });
    if (woken.length === 3) done();
  }, Date.now);
  const start = Date.now();
  wakeups.add("late", start + 60);
  wakeups.add("soon", start + 20);
  wakeups.add("late", start + 60); // the same retry told twice (the queue's news and a scan)
  wakeups.add("later", start + 90);
  await held(allWoken);
  wakeups.close();
  assert.deepEqual(
    woken.map((w) => w.queue),
    ["soon", "late", "later"],
  );
  assert.ok((woken[0]?.at ?? 0) >= start + 20);
  assert.ok((woken[1]?.at ?? 0) >= start + 60);
  assert.ok((woken[2]?.at ?? 0) >= start + 90);
});

test("close forgets every wakeup", async () => {
  const woken: string[] = [];
  const wakeups = new DueWakeups((queue) => woken.push(queue), Date.now);
  wakeups.add("q", Date.now() + 5);
  wakeups.close();
  // A second one, due well after the closed one's time, says when that time has passed.
  await held(
    new Promise<void>((resolve) => {
      new DueWakeups(() => resolve(), Date.now).add("probe", Date.now() + 30);
    }),
  );
  assert.deepEqual(woken, []);
});
