import assert from "node:assert/strict";
import { test } from "node:test";
import { rateWindow } from "./index.js";

test("a rate becomes evenly spaced BullMQ windows, no rounding changing the rate", () => {
  assert.deepEqual(rateWindow(20), [20, 1000]);
  assert.deepEqual(rateWindow(2.5), [1, 400]);
  assert.deepEqual(rateWindow(0.5), [1, 2000]);
  assert.deepEqual(rateWindow(500), [500, 1000]);
});
