import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { describeError } from "./errors.js";

const setting = { address: "hooks.internal:50051 (HOOKLINE_ADDRESS)", waited: "20s" };

test("a call that ran out of its own time says how long it waited and how to wait longer", () => {
  const timedOut = new ConnectError("the operation timed out", Code.DeadlineExceeded);
  assert.equal(
    describeError(timedOut, setting),
    "no answer from Hookline at hooks.internal:50051 (HOOKLINE_ADDRESS) within 20s (--timeout waits longer)",
  );
});

test("a deadline something between gave up on is shown as it came, without blaming --timeout", () => {
  // What a proxy answers when its own limit runs out, also on a call the CLI sent without one.
  const proxy = new ConnectError("upstream request timeout", Code.DeadlineExceeded);
  const message = describeError(proxy, setting);
  assert.equal(
    message,
    "deadline exceeded on the way to Hookline at hooks.internal:50051 (HOOKLINE_ADDRESS): upstream request timeout",
  );
  assert.doesNotMatch(message, /--timeout|within/);
});
