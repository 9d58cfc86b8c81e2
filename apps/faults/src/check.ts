import { type Attempt, DeliveryStatus } from "@hookline/contracts";
import { type Ledger, ms } from "./ledger.js";
import type { Receipt } from "./receiver.js";

/** A fault injected during a run, from its start to the moment it was over (equal for a kill). */
export interface Fault {
  kind: string;
  start: number;
  end: number;
}

export interface CheckInput {
  ledger: Ledger;
  receipts: readonly Receipt[];
  /** `<event id>|<endpoint id>` of every delivery owed → when its event was committed (or acked). */
  expected: Map<string, number>;
  faults: readonly Fault[];
  /** An attempt in flight this long before a fault (or after it ended) may be repeated because of it. */
  windowMs: number;
  /** At most this many requests may be repeated per fault (the attempts that can be in flight at once). */
  inFlightBound?: number;
}

/** A delivery that ended failed: each of its attempts, with the request it made if the receiver saw it. */
export interface FailedDelivery {
  key: string;
  attempts: { row: Attempt; request: Receipt | undefined }[];
}

export interface Verdict {
  deliveries: number;
  delivered: number;
  /** Final as failed or cancelled, with the attempt log saying why. */
  failed: number;
  /** Those failed deliveries, for a scenario to judge why they failed. */
  failures: FailedDelivery[];
  lost: number;
  /** Deliveries the receiver accepted more than once. */
  duplicated: number;
  /** Requests the receiver saw that have no attempt row: in flight at a fault. */
  unrecorded: number;
  /** Longest time from the end of a fault until the store had every delivery owed before it delivered. */
  maxRecoverMs: number;
  /** Longest time from an event's Emit to its delivery being delivered, over all deliveries. */
  maxLatencyMs: number;
  problems: string[];
}

const isOk = (status: number) => status >= 200 && status <= 299;
// Timestamps come from separate processes' clocks on one machine, and event loops can lag.
const EARLY_SLACK_MS = 200;
const LATE_SLACK_MS = 1500;
// A request whose sender gave up (a timeout) may still be read and answered by a receiver process
// starved of CPU, seconds later: CI saw three such requests handled within 10 ms of each other,
// with no attempt row near them, at the start of a run. Only a row that saw no status takes them.
const UNANSWERED_LATE_SLACK_MS = 10_000;

/** Judges a run: the store, the attempt log and what the receiver saw must tell the same story. */
export function checkLedger(input: CheckInput): Verdict {
  const problems: string[] = [];
  const note = (text: string) => {
    if (problems.length < 25) problems.push(text);
  };
  const rowsByKey = group(input.ledger.attempts, (a) => `${a.eventId}|${a.endpointId}`);
  const receiptsByKey = group(input.receipts, (r) => r.key);
  const deliveries = new Map(input.ledger.deliveries.map((d) => [`${d.eventId}|${d.endpointId}`, d]));
  for (const key of deliveries.keys()) if (!input.expected.has(key)) note(`unexpected delivery ${key}`);
  for (const key of receiptsByKey.keys()) if (!input.expected.has(key)) note(`request for unknown ${key}`);

  const verdict: Verdict = {
    deliveries: input.expected.size,
    delivered: 0,
    failed: 0,
    failures: [],
    lost: 0,
    duplicated: 0,
    unrecorded: 0,
    maxRecoverMs: 0,
    maxLatencyMs: 0,
    problems,
  };
  const unrecorded: Receipt[] = [];
  const deliveredAt = new Map<string, number>();
  for (const key of input.expected.keys()) {
    const delivery = deliveries.get(key);
    const rows = (rowsByKey.get(key) ?? []).sort((a, b) => a.attemptNumber - b.attemptNumber);
    const receipts = (receiptsByKey.get(key) ?? []).sort((a, b) => a.arrivedAt - b.arrivedAt);
    const accepted = receipts.filter((r) => isOk(r.status));
    if (accepted.length > 1) verdict.duplicated += 1;
    if (!delivery) {
      verdict.lost += 1;
      note(`lost: ${key} has no delivery`);
      continue;
    }
    if (rows.length !== delivery.attemptCount || rows.some((row, i) => row.attemptNumber !== i + 1))
      note(`${key}: attempt_count ${delivery.attemptCount} but rows ${rows.map((r) => r.attemptNumber)}`);
    const { unmatchedRows, leftOver, requestOf } = match(rows, receipts);
    const okRows = rows.filter((row) => isOk(row.responseStatus));
    const last = rows.at(-1);
    if (okRows[0]) deliveredAt.set(key, ms(okRows[0].startedAt) + okRows[0].durationMs);
    if (delivery.status === DeliveryStatus.DELIVERED) {
      if (okRows.length !== 1 || last !== okRows[0]) note(`${key}: delivered but 2xx rows ${okRows.length}`);
      if (accepted.length === 0) {
        verdict.lost += 1;
        note(`lost: ${key} is delivered in the store but the receiver never accepted it`);
      } else verdict.delivered += 1;
    } else if (
      (delivery.status === DeliveryStatus.FAILED || delivery.status === DeliveryStatus.CANCELLED) &&
      last?.deliveryStatus === delivery.status &&
      okRows.length === 0
    ) {
      verdict.failed += 1;
      verdict.failures.push({ key, attempts: rows.map((row) => ({ row, request: requestOf.get(row) })) });
    } else {
      verdict.lost += 1;
      note(`lost: ${key} ends ${DeliveryStatus[delivery.status]} after ${rows.length} attempts`);
    }
    // An attempt that failed may never have reached the receiver (a connect timeout); one with a
    // status must have: the receiver answered it.
    for (const row of unmatchedRows.filter((r) => r.responseStatus !== 0))
      note(`${key}: attempt ${row.attemptNumber} (status ${row.responseStatus}) matches no request`);
    unrecorded.push(...leftOver);
  }

  verdict.unrecorded = unrecorded.length;
  const perFault = new Map<Fault, number>();
  for (const receipt of unrecorded) {
    const fault = nearestFault(input.faults, receipt.arrivedAt, input.windowMs);
    if (!fault) {
      note(
        `${receipt.key}: request at ${receipt.arrivedAt} (${receipt.outcome} ${receipt.status}) has no attempt row and no fault explains it`,
      );
      continue;
    }
    perFault.set(fault, (perFault.get(fault) ?? 0) + 1);
  }
  for (const [fault, count] of perFault) {
    if (input.inFlightBound !== undefined && count > input.inFlightBound)
      note(
        `${count} requests repeated around the ${fault.kind} at ${fault.start}, more than ${input.inFlightBound} can be in flight`,
      );
  }
  verdict.maxRecoverMs = recoverMs(input, deliveredAt);
  for (const [key, at] of deliveredAt)
    verdict.maxLatencyMs = Math.max(verdict.maxLatencyMs, at - (input.expected.get(key) ?? at));
  return verdict;
}

/**
 * The fault closest in time to a request, among those whose window holds it. Faults come seconds
 * apart (a worker killed about 2 s after the last one's replacement started), so windows overlap:
 * charged to the first window that held it, each kill's stranded requests were counted against
 * the one before as well (CI: 33 against a bound of 32, two kills' worth).
 */
function nearestFault(faults: readonly Fault[], at: number, windowMs: number): Fault | undefined {
  const distance = (f: Fault) => (at < f.start ? f.start - at : at > f.end ? at - f.end : 0);
  let nearest: Fault | undefined;
  for (const fault of faults)
    if (distance(fault) <= windowMs && (!nearest || distance(fault) < distance(nearest))) nearest = fault;
  return nearest;
}

/**
 * Pairs each attempt row with the request it made; what is left over was never recorded. A
 * request carries the second its attempt started (webhook-timestamp), and only a row that started
 * in that second can take it: without that, a timed-out attempt whose request never arrived took
 * the next attempt's, and each later one the next again, so every attempt looked late. Rows
 * with a status go first: only a request answered with that status fits them, while a row that
 * saw no status fits any request in its window. Taken in attempt order instead, a timed-out
 * attempt whose request reached a starved receiver after the next attempt's (seen under load: 1.7 s
 * late) took the next attempt's answered request and left that attempt's 200 with nothing.
 */
function match(rows: readonly Attempt[], receipts: readonly Receipt[]) {
  const used = new Set<Receipt>();
  const requestOf = new Map<Attempt, Receipt>();
  const unmatchedRows: Attempt[] = [];
  const answeredFirst = [
    ...rows.filter((r) => r.responseStatus !== 0),
    ...rows.filter((r) => r.responseStatus === 0),
  ];
  for (const row of answeredFirst) {
    const start = ms(row.startedAt);
    const found = receipts.find(
      (r) =>
        !used.has(r) &&
        (r.stampedSecond === undefined || r.stampedSecond === Math.floor(start / 1000)) &&
        r.arrivedAt >= start - EARLY_SLACK_MS &&
        r.arrivedAt <=
          start + row.durationMs + (row.responseStatus === 0 ? UNANSWERED_LATE_SLACK_MS : LATE_SLACK_MS) &&
        // A status in the log must be the one the receiver sent; an error may hide any answer.
        (row.responseStatus === 0 || (r.status === row.responseStatus && r.outcome !== "aborted")),
    );
    if (found) {
      used.add(found);
      requestOf.set(row, found);
    } else unmatchedRows.push(row);
  }
  return { unmatchedRows, requestOf, leftOver: receipts.filter((r) => !used.has(r)) };
}

/**
 * A failed delivery in one line, times relative to its first attempt: each attempt (start,
 * duration, status or error) and the request it made as the receiver saw it, if it did.
 */
export function describeFailure(failure: FailedDelivery): string {
  const origin = ms(failure.attempts[0]?.row.startedAt);
  const attempts = failure.attempts.map(({ row, request }) => {
    const seen = request
      ? `received at +${request.arrivedAt - origin} ms, ${request.outcome} ${request.status}${request.faulted ? " on purpose" : ""}`
      : "never received";
    return `#${row.attemptNumber} at +${ms(row.startedAt) - origin} ms for ${row.durationMs} ms: ${row.responseStatus || row.error} (${seen})`;
  });
  return `${failure.key}: ${attempts.join("; ")}`;
}

/** For each fault: how long after it ended until every delivery owed by then was delivered. */
function recoverMs(input: CheckInput, deliveredAt: Map<string, number>): number {
  let worst = 0;
  for (const fault of input.faults) {
    for (const [key, readyAt] of input.expected) {
      const at = deliveredAt.get(key);
      if (readyAt > fault.end || at === undefined || at < fault.start) continue;
      worst = Math.max(worst, at - fault.end);
    }
  }
  return worst;
}

function group<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = groups.get(key);
    if (list) list.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
