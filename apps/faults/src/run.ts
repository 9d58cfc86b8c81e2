import assert from "node:assert/strict";
import type { HooklineClient } from "@hookline/client";
import { kind } from "./backend.js";
import { checkLedger, describeFailure, type Fault, type Verdict } from "./check.js";
import { committedAmong, readLedger, waitUntilSettled } from "./ledger.js";
import type { FaultReceiver } from "./receiver.js";
import { type EventStream, trace } from "./stream.js";

/** Creates n endpoints (ep0...) of a tenant, each pointing at its own path on the receiver. */
export async function createEndpoints(
  client: HooklineClient,
  tenantId: string,
  receiver: FaultReceiver,
  n: number,
): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `ep${i}`);
  for (const id of ids) await client.endpoints.createEndpoint({ tenantId, id, url: receiver.url(id) });
  return ids;
}

export interface RunToCheck {
  scenario: string;
  client: HooklineClient;
  tenantId: string;
  endpoints: readonly string[];
  receiver: FaultReceiver;
  stream: EventStream;
  faults: readonly Fault[];
  windowMs: number;
  inFlightBound?: number;
  settleTimeoutMs: number;
}

/** A verdict, and how many events were committed although their Emit failed (stranded). */
export type RunVerdict = Verdict & { strandedEvents: number };

/**
 * Lets the stream end and every delivery settle, then judges the ledger against the receiver and
 * prints the scenario's summary. Emits that failed count as owed when the store has their event.
 */
export async function settleAndCheck(run: RunToCheck): Promise<RunVerdict> {
  await run.stream.done;
  trace(
    `${run.scenario}: stream done, ${run.stream.acked.size} acked, ${run.stream.uncertain.size} uncertain`,
  );
  const expected = new Map<string, number>();
  const owe = (eventId: string, at: number) => {
    for (const endpoint of run.endpoints) expected.set(`${eventId}|${endpoint}`, at);
  };
  for (const [eventId, at] of run.stream.acked) owe(eventId, at);
  const committed = await committedAmong(run.client, run.tenantId, run.stream.uncertain);
  for (const [eventId, at] of committed) owe(eventId, at);
  await waitUntilSettled(run.client, run.tenantId, expected.size, run.settleTimeoutMs);
  trace(`${run.scenario}: settled`);
  const ledger = await readLedger(run.client, run.tenantId);
  const verdict = checkLedger({
    ledger,
    receipts: run.receiver.receipts,
    expected,
    faults: run.faults,
    windowMs: run.windowMs,
    ...(run.inFlightBound !== undefined && { inFlightBound: run.inFlightBound }),
  });
  printSummary(run, verdict, committed.size);
  return { ...verdict, strandedEvents: committed.size };
}

/** The ledger's promises: nothing lost, and every request accounted for. */
export function assertLedgerHolds(verdict: Verdict): void {
  assert.deepEqual(verdict.problems, [], "the ledger, the attempt log and the receiver disagree");
  assert.equal(verdict.lost, 0, "no delivery may be lost");
  assert.equal(verdict.delivered + verdict.failed, verdict.deliveries);
}

function printSummary(run: RunToCheck, v: Verdict, strandedEvents: number): void {
  const errors = [...run.stream.errors].map(([code, e]) => `${code} x${e.count}`).join(", ") || "none";
  const rows = [
    [
      ...["scenario", "backend", "deliveries", "delivered", "failed", "lost", "duplicated", "repeated"],
      ...["faults", "max recover", "max latency"],
    ],
    [
      run.scenario,
      kind,
      v.deliveries,
      v.delivered,
      v.failed,
      v.lost,
      v.duplicated,
      v.unrecorded,
      run.faults.length,
      `${(v.maxRecoverMs / 1000).toFixed(1)} s`,
      `${(v.maxLatencyMs / 1000).toFixed(1)} s`,
    ].map(String),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const table = [
    line(rows[0] ?? []),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    line(rows[1] ?? []),
  ];
  const notes = [
    `  emit errors: ${errors}; events whose Emit failed but were committed: ${strandedEvents}`,
    ...v.problems.map((p) => `  problem: ${p}`),
    ...v.failures.slice(0, 10).map((f) => `  failed: ${describeFailure(f)}`),
  ];
  console.log(["", ...table, ...notes, ""].join("\n"));
}
