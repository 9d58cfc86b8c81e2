import assert from "node:assert/strict";
import { test } from "node:test";
import { rateWindow } from "./index.js";

test("a rate becomes evenly spaced BullMQ windows, no rounding changing the rate", () => {
  assert.deepEqual(rateWindow(20), [1, 50]);
  assert.deepEqual(rateWindow(30), [3, 100]);
  assert.deepEqual(rateWindow(97), [97, 1000]);
  assert.deepEqual(rateWindow(500), [25, 50]);
  assert.deepEqual(rateWindow(10_000), [500, 50]);
  assert.deepEqual(rateWindow(2.5), [1, 400]);
  assert.deepEqual(rateWindow(0.5), [1, 2000]);
  assert.deepEqual(rateWindow(1 / 86_400), [1, 86_400_000]);
  // A rate stored before the api refused ones below a day still gets a window BullMQ can hold.
  assert.deepEqual(rateWindow(1e-300), [1, 86_400_000]);
  // Every whole rate from 1 to 10,000/s stays exact, in windows from 50 ms to a second.
  for (let rate = 1; rate <= 10_000; rate++) {
    const [max, ms] = rateWindow(rate);
    assert.ok(Number.isInteger(max) && ms >= 50 && ms <= 1000 && (max * 1000) / ms === rate, `${rate}/s`);
  }
});
