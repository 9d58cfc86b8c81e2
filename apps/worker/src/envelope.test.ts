import assert from "node:assert/strict";
import { test } from "node:test";
import { envelopeOf } from "./envelope.js";

test("the envelope keeps the emitted data byte for byte and is the same on every call", () => {
  const work = {
    eventType: 'invoice."paid"',
    eventCreatedAt: new Date("2026-11-30T10:00:00.123Z"),
    dataJson: '{"amount": 4200, "note": "\\u00e9 ✓",  "big": 12345678901234567890}',
  };
  const body = envelopeOf(work);
  assert.equal(body, envelopeOf(work));
  assert.ok(body.includes(work.dataJson), "data is spliced in, not re-serialised (big numbers survive)");
  assert.deepEqual(Object.keys(JSON.parse(body)), ["type", "timestamp", "data"]);
  assert.equal(JSON.parse(body).type, 'invoice."paid"');
  assert.equal(JSON.parse(body).timestamp, "2026-11-30T10:00:00.123Z");
});
