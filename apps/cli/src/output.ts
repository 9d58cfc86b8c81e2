import { toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Attempt,
  AttemptSchema,
  AttemptTrigger,
  type Delivery,
  DeliverySchema,
  DeliveryStatus,
  type Endpoint,
  EndpointSchema,
  EndpointStatus,
  type Event,
  EventSchema,
  type SentRequest,
} from "@hookline/contracts";
import { terminalSafe } from "./terminal-safe.js";

// JSON output is the contract's canonical JSON (what Connect's JSON protocol and curl show), with
// zero values included so every line of a stream has the same keys.
const JSON_OPTIONS = { alwaysEmitImplicit: true } as const;

export const attemptJson = (a: Attempt) => toJson(AttemptSchema, a, JSON_OPTIONS);
export const deliveryJson = (d: Delivery) => toJson(DeliverySchema, d, JSON_OPTIONS);
export const eventJson = (e: Event) => toJson(EventSchema, e, JSON_OPTIONS);

/** An endpoint as JSON; the secret key is left out unless the command is one that shows it. */
export function endpointJson(endpoint: Endpoint, withSecret: boolean) {
  const json = toJson(EndpointSchema, endpoint, JSON_OPTIONS) as Record<string, unknown>;
  if (!withSecret) delete json.secret;
  return json;
}

/**
 * A table cell as it will print: on one line, control characters escaped, so it is measured as
 * wide as it shows (a newline in a description would read as another row).
 */
const cellText = (cell: string) => terminalSafe(cell.replace(/[\t\n]+/g, " "));

/** Rows under a header, each column as wide as its widest cell. */
export function table(headers: readonly string[], given: readonly (readonly string[])[]): string {
  const rows = given.map((row) => row.map(cellText));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return `${[headers, ...rows].map(line).join("\n")}\n`;
}

/**
 * "name  value" lines with the values aligned. A value's further lines (a description, an event's
 * data) are indented under the first, so none of them can read as a field of its own ("secret").
 */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([name]) => name.length));
  const indent = " ".repeat(width + 2);
  return pairs
    .map(([name, value]) => `${name.padEnd(width)}  ${value.replace(/\r?\n/g, `\n${indent}`)}\n`)
    .join("");
}

export function time(ts: Timestamp | undefined): string {
  return ts ? timestampDate(ts).toISOString() : "-";
}

export function endpointFields(e: Endpoint, withSecret: boolean): string {
  const pairs: [string, string][] = [
    ["id", e.id],
    ["tenant", e.tenantId],
    ["url", e.url],
    ["description", e.description || "-"],
    ["event types", e.eventTypes.length > 0 ? e.eventTypes.join(", ") : "(all)"],
    ["status", endpointStatus(e)],
    ["max in flight", e.maxInFlight === undefined ? "(service default)" : String(e.maxInFlight)],
    ...(e.currentMaxInFlight === undefined
      ? []
      : ([["in-flight limit now", String(e.currentMaxInFlight)]] as [string, string][])),
    ["rate limit", e.rateLimitPerSecond === undefined ? "(none)" : `${e.rateLimitPerSecond}/s`],
  ];
  if (withSecret) pairs.push(["secret", e.secret]);
  pairs.push(["created", time(e.createdAt)], ["updated", time(e.updatedAt)]);
  return fields(pairs);
}

export function endpointStatus(e: Endpoint): string {
  if (e.status === EndpointStatus.DISABLED) {
    return e.disabledReason ? `disabled (${e.disabledReason})` : "disabled";
  }
  return e.status === EndpointStatus.ENABLED ? "enabled" : "unknown";
}

export const ENDPOINT_HEADERS = ["ID", "STATUS", "EVENT TYPES", "URL", "DESCRIPTION"] as const;

export function endpointRow(e: Endpoint): string[] {
  const types = e.eventTypes.length > 0 ? e.eventTypes.join(",") : "(all)";
  return [e.id, endpointStatus(e), types, e.url, e.description];
}

const DELIVERY_STATUS: Record<DeliveryStatus, string> = {
  [DeliveryStatus.UNSPECIFIED]: "unknown",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.DELIVERED]: "delivered",
  [DeliveryStatus.FAILED]: "failed",
  [DeliveryStatus.CANCELLED]: "cancelled",
};

export const DELIVERY_HEADERS = ["DELIVERY", "ENDPOINT", "STATUS", "ATTEMPTS", "NEXT ATTEMPT"] as const;

export function deliveryRow(d: Delivery): string[] {
  const next = d.nextAttemptAt ? time(d.nextAttemptAt) : "-";
  return [d.id, d.endpointId, DELIVERY_STATUS[d.status] ?? "unknown", String(d.attemptCount), next];
}

export const DELIVERY_LIST_HEADERS = [
  "DELIVERY",
  "CREATED",
  "TENANT",
  "EVENT",
  "ENDPOINT",
  "STATUS",
  "ATTEMPTS",
  "NEXT ATTEMPT",
] as const;

export function deliveryListRow(d: Delivery): string[] {
  const status = DELIVERY_STATUS[d.status] ?? "unknown";
  const { id, tenantId, eventId, endpointId } = d;
  return [
    id,
    time(d.createdAt),
    tenantId,
    eventId,
    endpointId,
    status,
    String(d.attemptCount),
    time(d.nextAttemptAt),
  ];
}

export function deliveryFields(d: Delivery, eventType: string): string {
  return fields([
    ["delivery", d.id],
    ["tenant", d.tenantId],
    ["event", `${d.eventId} (${eventType})`],
    ["endpoint", d.endpointId],
    ["status", DELIVERY_STATUS[d.status] ?? "unknown"],
    ["attempts", String(d.attemptCount)],
    ["next attempt", time(d.nextAttemptAt)],
    ["created", time(d.createdAt)],
  ]);
}

/** "attempt 2 (manual) at <time>: HTTP 500 in 12 ms" above the request that attempt sent. */
export function requestHeading(request: SentRequest): string {
  const a = request.attempt;
  if (!a) return "attempt";
  const manual = a.trigger === AttemptTrigger.MANUAL ? " (manual)" : "";
  const answer = a.responseStatus === 0 ? oneLine(a.error, 80) || "no response" : `HTTP ${a.responseStatus}`;
  return `attempt ${a.attemptNumber}${manual} at ${time(a.startedAt)}: ${answer} in ${a.durationMs} ms`;
}

export const ATTEMPT_HEADERS = [
  "ID",
  "STARTED",
  "TENANT",
  "ENDPOINT",
  "EVENT",
  "TRY",
  "RESULT",
  "HTTP",
  "TOOK",
  "DETAIL",
] as const;

/**
 * Starting widths for a live stream of attempts, so early rows rarely need to widen a column;
 * TRY fits a manual retry ("12 (manual)"), which would otherwise shift every column after it.
 */
export const ATTEMPT_WIDTHS = [6, 24, 10, 12, 16, 11, 10, 4, 7] as const;

/** One attempt as table cells; the result is the delivery's state after it ("will retry"). */
export function attemptRow(a: Attempt): string[] {
  const result =
    a.deliveryStatus === DeliveryStatus.PENDING ? "will retry" : DELIVERY_STATUS[a.deliveryStatus];
  const manual = a.trigger === AttemptTrigger.MANUAL ? " (manual)" : "";
  return [
    String(a.id),
    time(a.startedAt),
    a.tenantId,
    a.endpointId,
    a.eventId,
    `${a.attemptNumber}${manual}`,
    result ?? "unknown",
    a.responseStatus === 0 ? "-" : String(a.responseStatus),
    `${a.durationMs} ms`,
    oneLine(a.error || a.responseBody, 60),
  ];
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Aligned columns for rows that arrive one at a time: a column widens when a longer value comes,
 * so rows stay aligned with those before them as far as the widths seen so far allow.
 */
export function columnWriter(
  headers: readonly string[],
  minWidths: readonly number[],
  write: (line: string) => void,
) {
  const widths = headers.map((h, i) => Math.max(h.length, minWidths[i] ?? 0));
  const line = (given: readonly string[]) => {
    const cells = given.map(cellText);
    cells.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
    const text = cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
    write(`${text}\n`);
  };
  return { header: () => line(headers), row: line };
}
