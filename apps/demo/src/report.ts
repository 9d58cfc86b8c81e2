import { type Attempt, DeliveryStatus } from "@hookline/contracts";
import { RETRY_WAITS_MS, TIMEOUT_MS } from "./backend.js";
import { BEHAVIOURS, type ReceiverTally } from "./receivers.js";
import { EVENT_ID, type ServiceOutcome } from "./scenario.js";

/** A delivery status as a word: "pending", "delivered", "failed", "cancelled". */
export function statusName(status: DeliveryStatus): string {
  return (DeliveryStatus[status] ?? `status ${status}`).toLowerCase();
}

/** What came back for an attempt: the HTTP status and body, or why nothing came. */
export function responseText(attempt: Attempt): string {
  if (attempt.responseStatus === 0) return attempt.error || "(no response, no error recorded)";
  return [String(attempt.responseStatus), attempt.responseBody, attempt.error].filter(Boolean).join(" ");
}

/** Distinct webhook-id values across every request every receiver saw, sorted. */
export function distinctWebhookIds(tallies: readonly ReceiverTally[]): string[] {
  return [...new Set(tallies.flatMap((t) => t.webhookIds))].sort();
}

/**
 * The demo's stdout. Only what the service decided and the receivers saw: no ids, ports or timings,
 * so it reads the same on every backend and every run.
 */
export function renderReport(outcome: ServiceOutcome, tallies: readonly ReceiverTally[]): string {
  const waits = RETRY_WAITS_MS.map((ms) => `${ms} ms`);
  const lines = [
    `Hookline demo: one invoice.paid event to ${tallies.length} endpoints`,
    `retry waits ${waits.join(", ")} (${waits.length + 1} attempts at most), timeout ${TIMEOUT_MS} ms`,
    "",
    "Endpoints",
    ...table(Object.entries(BEHAVIOURS).map(([id, behaviour]) => [id, behaviour.says])),
    "",
    "Attempts",
    ...table([
      ["endpoint", "try", "result", "response"],
      ...outcome.attempts.map((a) => [
        a.endpointId,
        String(a.attemptNumber),
        a.deliveryStatus === DeliveryStatus.PENDING ? "will retry" : statusName(a.deliveryStatus),
        responseText(a),
      ]),
    ]),
    "",
    "Deliveries",
    ...table(
      outcome.deliveries.map((d) => [
        d.endpointId,
        statusName(d.status),
        `after ${d.attemptCount} attempt${d.attemptCount === 1 ? "" : "s"}`,
      ]),
    ),
    "",
    "Disabled endpoints",
    ...(outcome.disabled.length === 0
      ? ["  (none)"]
      : table(outcome.disabled.map((e) => [e.id, e.disabledReason || "(no reason recorded)"]))),
    "",
    "Receivers",
    ...table(receiverRows(tallies)),
  ];
  return `${lines.join("\n")}\n`;
}

function receiverRows(tallies: readonly ReceiverTally[]): string[][] {
  const requests = tallies.reduce((sum, t) => sum + t.requests, 0);
  const verified = tallies.reduce((sum, t) => sum + t.verified, 0);
  const ids = distinctWebhookIds(tallies);
  const perEndpoint = tallies.map((t) => `${t.endpoint} ${t.requests}`).join(", ");
  const idNote = ids.length === 1 && ids[0] === EVENT_ID ? "the event id" : ids.join(", ");
  return [
    ["requests received", `${requests} (${perEndpoint})`],
    ["signatures verified", `${verified} of ${requests} (standardwebhooks, each endpoint's secret)`],
    ["distinct webhook-id", `${ids.length} (${idNote})`],
  ];
}

/** Left-aligned columns, two spaces apart, indented by two. */
function table(rows: readonly string[][]): string[] {
  const columns = Math.max(0, ...rows.map((row) => row.length));
  const widths = Array.from({ length: columns }, (_, i) =>
    Math.max(0, ...rows.map((row) => row[i]?.length ?? 0)),
  );
  return rows.map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd());
}
