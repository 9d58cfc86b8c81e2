import assert from "node:assert/strict";
import { test } from "node:test";
import { inProcessSignals } from "./in-process-signals.js";

test("in process, published news reaches every subscriber at once until it unsubscribes", async () => {
  const signals = inProcessSignals();
  const heard: string[] = [];
  const stopFirst = await signals.workFed.subscribe((fed) => heard.push(`first ${fed?.[0]?.queue}`));
  await signals.workFed.subscribe((fed) => heard.push(`second ${fed?.[0]?.queue}`));
  signals.workFed.publish([{ queue: "q", dueAt: 0 }]);
  assert.deepEqual(heard, ["first q", "second q"]);
  stopFirst();
  signals.workFed.publish(undefined);
  assert.deepEqual(heard, ["first q", "second q", "second undefined"]);
  signals.endpointsChanged.publish();
  assert.equal(heard.length, 3, "topics are separate");
});
