import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRetryAfter } from "./retry-after.js";

const now = Date.parse("2026-11-30T12:00:00Z");

test("Retry-After in delta seconds becomes milliseconds, however large", () => {
  assert.equal(parseRetryAfter("120", now), 120_000);
  assert.equal(parseRetryAfter(" 0 ", now), 0);
  assert.equal(parseRetryAfter("31536000000", now), 31_536_000_000_000);
  assert.equal(parseRetryAfter("9".repeat(400), now), Number.MAX_SAFE_INTEGER);
  assert.equal(parseRetryAfter(["5", "60"], now), 5_000);
});

test("Retry-After as an HTTP date is the time until then", () => {
  assert.equal(parseRetryAfter("Mon, 30 Nov 2026 12:01:30 GMT", now), 90_000);
  assert.equal(parseRetryAfter("Monday, 30-Nov-26 12:01:30 GMT", now), 90_000);
  // Not HTTP's form, but sent: 07:01:30 in New York is 12:01:30 GMT.
  assert.equal(parseRetryAfter("Mon, 30 Nov 2026 07:01:30 EST", now), 90_000);
  assert.equal(parseRetryAfter("Mon, 30 Nov 2026 04:01:30 PST", now), 90_000);
});

test("an asctime date, which names no zone, is GMT wherever Hookline runs", () => {
  const zone = process.env.TZ;
  process.env.TZ = "America/New_York";
  try {
    assert.equal(parseRetryAfter("Mon Nov 30 12:01:30 2026", now), 90_000);
    assert.equal(parseRetryAfter("Mon, 30 Nov 2026 12:01:30 GMT", now), 90_000);
  } finally {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  }
});

test("negative, past or malformed Retry-After values are ignored", () => {
  for (const value of ["-5", "1.5", "soon", "", "Sun, 29 Nov 2026 12:00:00 GMT", "Mon, 99 Foo 2026 GMT"]) {
    assert.equal(parseRetryAfter(value, now), undefined, JSON.stringify(value));
  }
  assert.equal(parseRetryAfter(undefined, now), undefined);
});
