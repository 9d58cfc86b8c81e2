import assert from "node:assert/strict";
import { test } from "node:test";
import { errorText, isTimeout } from "./error-text.js";

/** An error as undici or the kernel reports it: a code, maybe wrapped as the cause of another. */
function failure(code: string, wrapped = false): Error {
  const inner = Object.assign(new Error(code), { code });
  return wrapped ? new Error("fetch failed", { cause: inner }) : inner;
}

test("deadlines that undici or the kernel enforce read as timeouts; refusals and resets do not", () => {
  assert.equal(isTimeout(failure("UND_ERR_CONNECT_TIMEOUT")), true);
  assert.equal(isTimeout(failure("UND_ERR_HEADERS_TIMEOUT", true)), true);
  assert.equal(isTimeout(failure("ETIMEDOUT", true)), true);
  assert.equal(isTimeout(failure("ECONNREFUSED")), false);
  assert.equal(isTimeout(failure("ECONNRESET")), false);
  assert.equal(isTimeout(new Error("no code")), false);
  // The customer reads the deadline, whichever layer enforced it.
  assert.equal(errorText(failure("UND_ERR_CONNECT_TIMEOUT"), 5000), "no response within 5000 ms");
});
