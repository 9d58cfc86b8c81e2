import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { AttemptSchema, AttemptTrigger, DeliveryStatus, EndpointSchema } from "@hookline/contracts";
import {
  ATTEMPT_HEADERS,
  ATTEMPT_WIDTHS,
  attemptJson,
  attemptRow,
  columnWriter,
  endpointFields,
  table,
} from "./output.js";

const attempt = create(AttemptSchema, {
  id: 42n,
  tenantId: "acme",
  deliveryId: "dl_1",
  eventId: "inv_1001",
  endpointId: "billing",
  attemptNumber: 2,
  startedAt: timestampFromMs(Date.UTC(2025, 0, 2, 3, 4, 5, 678)),
  durationMs: 31,
  responseStatus: 503,
  responseBody: "busy\n  try later",
  deliveryStatus: DeliveryStatus.PENDING,
  trigger: AttemptTrigger.SCHEDULED,
});

test("an attempt reads as one row: the delivery's state after it, and a one-line detail", () => {
  assert.deepEqual(attemptRow(attempt), [
    "42",
    "2025-01-02T03:04:05.678Z",
    "acme",
    "billing",
    "inv_1001",
    "2",
    "will retry",
    "503",
    "31 ms",
    "busy try later",
  ]);
  const failed = attemptRow({
    ...attempt,
    responseStatus: 0,
    error: "no response within 300 ms",
    deliveryStatus: DeliveryStatus.FAILED,
    trigger: AttemptTrigger.MANUAL,
  });
  assert.deepEqual(failed.slice(5), ["2 (manual)", "failed", "-", "31 ms", "no response within 300 ms"]);
});

test("attempt JSON is the contract's JSON with every field present", () => {
  const json = attemptJson({ ...attempt, responseBody: "", responseStatus: 0 }) as Record<string, unknown>;
  assert.equal(json.id, "42");
  assert.equal(json.responseStatus, 0);
  assert.equal(json.error, "");
  assert.equal(json.deliveryStatus, "DELIVERY_STATUS_PENDING");
  assert.equal(json.startedAt, "2025-01-02T03:04:05.678Z");
});

test("tables align columns to their widest cell", () => {
  assert.equal(
    table(
      ["ID", "URL"],
      [
        ["a", "https://x"],
        ["long-id", "y"],
      ],
    ),
    "ID       URL\na        https://x\nlong-id  y\n",
  );
});

test("streamed columns start wide and widen for a longer value", () => {
  const lines: string[] = [];
  const columns = columnWriter(ATTEMPT_HEADERS, ATTEMPT_WIDTHS, (line) => lines.push(line));
  columns.header();
  columns.row(attemptRow(attempt));
  columns.row(attemptRow({ ...attempt, id: 43n, endpointId: "a-much-longer-endpoint-id" }));
  columns.row(attemptRow({ ...attempt, id: 44n }));
  const [header = "", first = "", , last = ""] = lines;
  assert.equal(header.indexOf("STARTED"), first.indexOf("2025-"));
  assert.equal(header.indexOf("EVENT"), first.indexOf("inv_1001"));
  // After the wide row, later rows keep the widened column.
  assert.equal(last.indexOf("inv_1001"), lines[2]?.indexOf("inv_1001"));
  assert.ok(lines.every((line) => line.endsWith("\n") && !line.endsWith(" \n")));
});

test("a manual attempt in a stream keeps the columns after TRY where the header put them", () => {
  const lines: string[] = [];
  const columns = columnWriter(ATTEMPT_HEADERS, ATTEMPT_WIDTHS, (line) => lines.push(line));
  columns.header();
  columns.row(attemptRow(attempt));
  columns.row(attemptRow({ ...attempt, id: 43n, attemptNumber: 12, trigger: AttemptTrigger.MANUAL }));
  const [header = "", scheduled = "", manual = ""] = lines;
  assert.match(manual, /12 \(manual\)/);
  const result = header.indexOf("RESULT");
  assert.deepEqual([scheduled.indexOf("will retry"), manual.indexOf("will retry")], [result, result]);
});

test("a value's further lines are indented under it, so none reads as a field of its own", () => {
  const endpoint = create(EndpointSchema, {
    id: "billing",
    tenantId: "acme",
    url: "https://example.com/h",
    description: "Billing hooks\nsecret         whsec_not_the_real_one",
    secret: "whsec_real",
  });
  const lines = endpointFields(endpoint, true).split("\n");
  const secretLines = lines.filter((line) => line.startsWith("secret"));
  assert.deepEqual(secretLines, ["secret         whsec_real"]);
  const at = lines.findIndex((line) => line.startsWith("description"));
  assert.equal(lines[at], "description    Billing hooks");
  assert.equal(lines[at + 1], "               secret         whsec_not_the_real_one");
});
