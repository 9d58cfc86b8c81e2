import assert from "node:assert/strict";
import { test } from "node:test";
import { type Attempt, type Delivery, DeliveryStatus } from "@hookline/contracts";
import { checkLedger, describeFailure, type Verdict } from "./check.js";
import type { Receipt } from "./receiver.js";

// The ledger as the api returns it, reduced to the fields the check reads (the faults package
// builds no protobuf messages of its own).
const at = (ms: number) => ({ seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1e6 });
const attempt = (
  n: number,
  startedAt: number,
  durationMs: number,
  responseStatus: number,
  deliveryStatus = DeliveryStatus.PENDING,
) =>
  ({
    eventId: "e45",
    endpointId: "ep1",
    attemptNumber: n,
    startedAt: at(startedAt),
    durationMs,
    responseStatus,
    error: responseStatus === 0 ? `no response within ${durationMs} ms` : "",
    deliveryStatus,
  }) as unknown as Attempt;
const receipt = (arrivedAt: number, outcome: Receipt["outcome"], faulted: boolean): Receipt => ({
  key: "e45|ep1",
  arrivedAt,
  doneAt: arrivedAt + 1,
  status: 200,
  outcome,
  faulted,
});

/** The verdict on one delivery, e45 to ep1, owed from t = 1,000,000 ms, with no process fault. */
function verdictFor(status: DeliveryStatus, attempts: Attempt[], receipts: Receipt[]): Verdict {
  const delivery = { eventId: "e45", endpointId: "ep1", status, attemptCount: attempts.length };
  return checkLedger({
    ledger: { deliveries: [delivery as unknown as Delivery], attempts },
    receipts,
    expected: new Map([["e45|ep1", 1_000_000]]),
    faults: [],
    windowMs: 2000,
  });
}

test("a timed-out attempt whose request reached the receiver after the retry's is still matched", () => {
  // Seen under load: attempt 1 timed out, and its request reached a starved receiver 1.7 s after
  // it was sent, after attempt 2's; the receiver then saw attempt 1's sender gone.
  const verdict = verdictFor(
    DeliveryStatus.DELIVERED,
    [attempt(1, 1_000_000, 1073, 0), attempt(2, 1_001_614, 274, 200, DeliveryStatus.DELIVERED)],
    [receipt(1_001_742, "answered", false), receipt(1_001_802, "aborted", true)],
  );
  assert.deepEqual(verdict.problems, []);
  assert.equal(verdict.unrecorded, 0);
  assert.equal(verdict.delivered, 1);
});

test("a request with no attempt row and no fault to explain it is reported", () => {
  const verdict = verdictFor(
    DeliveryStatus.DELIVERED,
    [attempt(1, 1_000_000, 20, 200, DeliveryStatus.DELIVERED)],
    [receipt(1_000_005, "answered", false), receipt(1_000_010, "answered", false)],
  );
  assert.equal(verdict.unrecorded, 1);
  assert.match(verdict.problems.join("\n"), /has no attempt row and no fault explains it/);
});

test("a timed-out attempt's request that a starved receiver answered seconds later is matched to it", () => {
  // Seen in CI at the start of a run: the receiver handled a backlog of requests at one instant,
  // 2 s and more after their senders had given up.
  const verdict = verdictFor(
    DeliveryStatus.DELIVERED,
    [attempt(1, 1_000_000, 1000, 0), attempt(2, 1_001_300, 40, 200, DeliveryStatus.DELIVERED)],
    [receipt(1_001_310, "answered", false), receipt(1_004_200, "answered", false)],
  );
  assert.deepEqual(verdict.problems, []);
  assert.equal(verdict.unrecorded, 0);
});

test("a failed delivery lists each attempt beside the request it made, or none", () => {
  // Attempt 1 met a cut on purpose; attempt 2 timed out before its request reached the receiver.
  const verdict = verdictFor(
    DeliveryStatus.FAILED,
    [attempt(1, 1_000_000, 3, 0), attempt(2, 1_000_500, 1000, 0, DeliveryStatus.FAILED)],
    [receipt(1_000_001, "cut", true)],
  );
  assert.deepEqual(verdict.problems, []);
  assert.equal(verdict.failed, 1);
  const [failure] = verdict.failures;
  assert.deepEqual(
    failure?.attempts.map(({ row, request }) => [row.attemptNumber, request?.faulted]),
    [
      [1, true],
      [2, undefined],
    ],
  );
  assert.equal(
    failure && describeFailure(failure),
    "e45|ep1: #1 at +0 ms for 3 ms: no response within 3 ms (received at +1 ms, cut 200 on purpose); " +
      "#2 at +500 ms for 1000 ms: no response within 1000 ms (never received)",
  );
});

test("requests stranded by kills seconds apart are each charged to their own kill", () => {
  // Two worker kills 4 s apart, windows of 3 s: each strands 20 requests in flight (within the
  // bound of 32), and each of those deliveries goes out after that kill's restart. Charged to the
  // first window that holds them, the second kill's 20 would join the first's: 40.
  const kills = [
    { kind: "worker SIGKILL", start: 1_000_000, end: 1_001_500 },
    { kind: "worker SIGKILL", start: 1_004_000, end: 1_005_500 },
  ];
  const deliveries: Delivery[] = [];
  const attempts: Attempt[] = [];
  const receipts: Receipt[] = [];
  const expected = new Map<string, number>();
  kills.forEach((kill, k) => {
    for (let i = 0; i < 20; i++) {
      const eventId = `e${k}-${i}`;
      const key = `${eventId}|ep1`;
      expected.set(key, kill.start - 500);
      deliveries.push({
        eventId,
        endpointId: "ep1",
        status: DeliveryStatus.DELIVERED,
        attemptCount: 1,
      } as unknown as Delivery);
      const retried = kill.end + 100 + i;
      attempts.push({
        ...attempt(1, retried, 5, 200, DeliveryStatus.DELIVERED),
        eventId,
      } as Attempt);
      receipts.push({ ...receipt(kill.start - 100 + i, "aborted", false), key, status: 0 });
      receipts.push({ ...receipt(retried + 1, "answered", false), key });
    }
  });
  const verdict = checkLedger({
    ledger: { deliveries, attempts },
    receipts,
    expected,
    faults: kills,
    windowMs: 3000,
    inFlightBound: 32,
  });
  assert.equal(verdict.unrecorded, 40);
  assert.deepEqual(verdict.problems, []);
});

test("a request is matched only to the attempt that started in the second it was stamped with", () => {
  // Attempt 1's request never arrived; attempts 2 and 3 reached the receiver at once and were
  // answered, yet timed out. Matched by time alone, attempt 1 took attempt 2's request and attempt 2
  // took attempt 3's: every attempt then looked 1.25 s late, as if the host had stalled.
  const stamped = (arrivedAt: number, startedAt: number): Receipt => ({
    ...receipt(arrivedAt, "answered", false),
    stampedSecond: Math.floor(startedAt / 1000),
  });
  const verdict = verdictFor(
    DeliveryStatus.FAILED,
    [
      attempt(1, 1_000_100, 1000, 0),
      attempt(2, 1_001_350, 1000, 0),
      attempt(3, 1_002_850, 1000, 0, DeliveryStatus.FAILED),
    ],
    [stamped(1_001_352, 1_001_350), stamped(1_002_852, 1_002_850)],
  );
  assert.deepEqual(verdict.problems, []);
  assert.deepEqual(
    verdict.failures[0]?.attempts.map(({ row, request }) => [row.attemptNumber, request?.arrivedAt]),
    [
      [1, undefined],
      [2, 1_001_352],
      [3, 1_002_852],
    ],
  );
});
