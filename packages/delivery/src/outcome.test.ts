import assert from "node:assert/strict";
import { test } from "node:test";
import { type AttemptOutcome, loadSignalOf } from "./outcome.js";

const answer = (status: number): AttemptOutcome => ({
  kind: "response",
  status,
  body: "",
  retryAfterMs: undefined,
  durationMs: 5,
});

test("timeouts and 429 read as overload; 5xx and dropped connections as failures; 2xx as calm; the rest as nothing", () => {
  assert.equal(loadSignalOf(answer(200)), "ok");
  assert.equal(loadSignalOf(answer(204)), "ok");
  assert.equal(loadSignalOf(answer(429)), "overload");
  assert.equal(
    loadSignalOf({ kind: "error", error: "no response within 10000 ms", timedOut: true, durationMs: 10_000 }),
    "overload",
  );
  assert.equal(loadSignalOf(answer(500)), "failure");
  assert.equal(loadSignalOf(answer(503)), "failure");
  assert.equal(
    loadSignalOf({ kind: "error", error: "connection failed: ECONNREFUSED", durationMs: 1 }),
    "failure",
  );
  assert.equal(loadSignalOf(answer(404)), "neutral");
  assert.equal(loadSignalOf(answer(410)), "neutral");
  assert.equal(loadSignalOf(answer(301)), "neutral");
  assert.equal(
    loadSignalOf({ kind: "error", error: "address not allowed", durationMs: 0, blocked: true }),
    "neutral",
    "our own refusal says nothing about the receiver",
  );
});
