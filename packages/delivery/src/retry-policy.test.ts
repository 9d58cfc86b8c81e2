import assert from "node:assert/strict";
import { test } from "node:test";
import { type AttemptOutcome, type RetryPolicy, retryDelayMs, verdictOf } from "./index.js";

const policy: RetryPolicy = { scheduleMs: [5_000, 300_000, 1_800_000], jitter: 0.2 };
const half = (): number => 0.5;

function response(status: number, retryAfterMs?: number): AttemptOutcome {
  return { kind: "response", status, body: "", retryAfterMs, durationMs: 12 };
}
const networkError: AttemptOutcome = {
  kind: "error",
  error: "connection failed: ECONNREFUSED",
  durationMs: 3,
};

test("with random() = 0.5 each retry waits exactly the scheduled time", () => {
  assert.deepEqual(
    [1, 2, 3].map((attempt) => retryDelayMs(policy, attempt, response(500), half)),
    [5_000, 300_000, 1_800_000],
  );
  assert.equal(retryDelayMs(policy, 1, networkError, half), 5_000);
});

test("jitter stays within ±jitter of the scheduled wait", () => {
  assert.equal(
    retryDelayMs(policy, 1, response(503), () => 0),
    4_000,
  );
  assert.equal(
    retryDelayMs(policy, 1, response(503), () => 0.999_999_9),
    6_000,
  );
  assert.equal(
    retryDelayMs(policy, 2, response(503), () => 0.75),
    330_000,
  );
  assert.equal(retryDelayMs({ ...policy, jitter: 0 }, 2, response(503), Math.random), 300_000);
});

test("Retry-After is honoured but clamped between the scheduled wait and twice it", () => {
  const none = (): number => 0;
  assert.equal(retryDelayMs(policy, 1, response(429, 0), none), 5_000);
  assert.equal(retryDelayMs(policy, 1, response(429, 7_000), none), 7_000);
  assert.equal(retryDelayMs(policy, 1, response(429, Number.MAX_SAFE_INTEGER), none), 10_000);
  assert.equal(retryDelayMs(policy, 2, response(503, 86_400_000), none), 600_000);
});

test("a Retry-After wait is spread up to the jitter later, never earlier than asked", () => {
  // Many deliveries told the same Retry-After by one overloaded receiver come back spread out.
  assert.equal(retryDelayMs(policy, 1, response(429, 7_000), half), 7_700);
  assert.equal(
    retryDelayMs(policy, 1, response(429, 7_000), () => 0.999_999_9),
    8_400,
  );
  assert.equal(retryDelayMs(policy, 2, response(503, 86_400_000), half), 660_000);
  assert.equal(retryDelayMs({ ...policy, jitter: 0 }, 1, response(429, 7_000), half), 7_000);
});

test("there is no retry after the last scheduled attempt, or once delivered or gone", () => {
  assert.equal(retryDelayMs(policy, 4, response(500), half), undefined);
  assert.equal(retryDelayMs(policy, 4, networkError, half), undefined);
  assert.equal(retryDelayMs(policy, 1, response(200), half), undefined);
  assert.equal(retryDelayMs(policy, 1, response(410), half), undefined);
  assert.equal(retryDelayMs({ scheduleMs: [], jitter: 0.2 }, 1, response(500), half), undefined);
});

test("only 2xx is delivered and only 410 is gone", () => {
  const verdicts = [200, 201, 299, 301, 302, 304, 400, 404, 409, 410, 429, 500, 503].map((status) => [
    status,
    verdictOf(response(status)),
  ]);
  assert.deepEqual(Object.fromEntries(verdicts), {
    200: "delivered",
    201: "delivered",
    299: "delivered",
    301: "retry",
    302: "retry",
    304: "retry",
    400: "retry",
    404: "retry",
    409: "retry",
    410: "gone",
    429: "retry",
    500: "retry",
    503: "retry",
  });
  assert.equal(verdictOf(networkError), "retry");
});
