import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { FIXED_CONCURRENCY, kind, type OwnServers, servers, startOwnServers } from "./backend.js";
import { runCluster } from "./cluster.js";
import type { Action } from "./receiver.js";
import { assertLedgerHolds } from "./run.js";

// Well above the slowest healthy answer (180 ms): with four scenarios sharing two cores, a 500 ms
// deadline once failed a delivery whose three healthy answers each met a stall (CI, servers).
const TIMEOUT_MS = 1_000;

/**
 * The first two requests of a delivery may misbehave: cut mid-request-body, cut mid-response-body
 * (after a 200 and a few bytes), or answer after the deadline; the rest answer slowly under load.
 * From the third request on the receiver behaves, so every delivery ends delivered.
 */
function misbehave(eventId: string, endpointId: string, nth: number): Action {
  const roll =
    createHash("sha256").update(`${eventId}|${endpointId}|${nth}`).digest().readUInt16BE(0) / 65536;
  if (nth <= 2 && roll < 0.1) return { kind: "cut-request" };
  if (nth <= 2 && roll < 0.2) return { kind: "cut-response" };
  if (nth <= 2 && roll < 0.3)
    return { kind: "answer", status: 200, delayMs: TIMEOUT_MS + 400, faulted: true };
  return { kind: "answer", status: 200, delayMs: roll < 0.6 ? Math.floor(roll * 300) : 0 };
}

test(`the receiver cuts connections mid-body and answers slowly under load (${kind})`, async () => {
  const own: OwnServers | undefined = servers ? await startOwnServers() : undefined;
  try {
    const { run, verdict } = await runCluster({
      scenario: "6. receiver cuts and slowness",
      own,
      workers: 2,
      events: servers ? 500 : 300,
      perSecond: servers ? 40 : 15,
      behaviour: misbehave,
      env: { ...FIXED_CONCURRENCY, HOOKLINE_DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS) },
      async inject() {},
    });
    assertLedgerHolds(verdict);
    // No process fault: every request the receiver saw has its attempt row (checked above), so a
    // repeat is only ever a retry the attempt log explains.
    assert.equal(verdict.unrecorded, 0);
    assert.equal(verdict.failed, 0, "two misbehaving answers never exhaust five attempts");
    const faulted = run.receiver.receipts.filter((r) => r.faulted).length;
    assert.ok(faulted > 100, `the receiver misbehaved (${faulted} times)`);
  } finally {
    await own?.dispose();
  }
});
