import assert from "node:assert/strict";
import { test } from "node:test";
import { retryLateness, timelineProblem } from "./lateness.js";
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

test("timelines with exactly the expected requests per delivery pass", () => {
  const four: RequestTimes[] = [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
  ];
  assert.equal(timelineProblem([four, four], 2, 4), undefined);
});

test("a delivery with an extra or a missing request fails the run, and says how many", () => {
  const request: RequestTimes = [0, 1];
  const problem = timelineProblem(
    [Array(4).fill(request), Array(5).fill(request), Array(5).fill(request), Array(3).fill(request)],
    4,
    4,
  );
  assert.equal(problem, "3 deliveries did not get exactly 4 requests (1 with 3, 2 with 5)");
});

test("a delivery the receiver never saw fails the run", () => {
  const request: RequestTimes = [0, 1];
  assert.equal(timelineProblem([Array(2).fill(request)], 2, 2), "the receiver saw 1 deliveries, not 2");
});
