import assert from "node:assert/strict";
import { test } from "node:test";
import { retryLateness } from "./lateness.js";
import type { RequestTimes } from "./receiver-protocol.js";

test("a retry's lateness is its arrival after the previous answer plus the scheduled wait", () => {
  // Answers at 10, 70 and 180; waits 50, 100: due at 60 and 170, arrived at 61 and 200.
  const delivery: RequestTimes[] = [
    [0, 10],
    [61, 70],
    [200, 210],
  ];
  assert.deepEqual(retryLateness([delivery], [50, 100]), [1, 30]);
});

test("requests are ordered by arrival, and those past the schedule are not retries of it", () => {
  const shuffled: RequestTimes[] = [
    [120, 125],
    [0, 5],
    [60, 65],
    [400, 405],
  ];
  // Due at 55 (arrived 60: 5 late) and 165 (arrived 120: 45 early); the fourth has no wait listed.
  assert.deepEqual(retryLateness([shuffled], [50, 100]), [-45, 5]);
});

test("lateness from every delivery comes back sorted", () => {
  const late: RequestTimes[] = [
    [0, 1],
    [81, 82],
  ];
  const onTime: RequestTimes[] = [
    [0, 1],
    [51, 52],
  ];
  assert.deepEqual(retryLateness([late, onTime], [50]), [0, 30]);
});
